//===- runtime/gloo/GroupStore.h - A gloo group's view of the rendezvous -*- C++ -*-===//
//
// Where the ranks of one gloo group meet: the process's store (GlooStore.h,
// ProbedStore.h) under the group's prefix (as Gloo's PrefixStore names
// keys: prefix/key), with three things Gloo's PrefixStore lacks.
//
// - Waits end at the join's deadline: the group's timeout
//   (COLLC_TIMEOUT_MS, --timeout-ms, an executor's option) after the store
//   was made, counted in milliseconds, for all of the join's waits
//   together. Gloo's stores wait 30 s where their caller names no timeout
//   (a get, a wait without one), and count whole seconds where it does (a
//   100 ms wait lasts 1 s); a join of N ranks, whose every wait took the
//   whole timeout, was seen to last 5 timeouts.
// - A rank is claimed before the group forms, atomically (ProbedStore's
//   claim): the first process to claim a rank holds it. A second one is
//   refused at once, told which process holds it and whether that process
//   is running: two processes started with the same rank, or a rendezvous
//   that served an earlier run. The group's size is claimed too, by its
//   first rank: a rank started with another size is refused.
// - A refused rank posts why, as a claim of the group's refusal key (the
//   first reason stays), and every wait watches that key: the ranks already
//   waiting for their peers fail at once with that reason instead of
//   waiting out their timeout.
// - A rank that claimed its rank and then stopped (killed during the join)
//   is named: every wait looks, four times a second, whether the processes
//   that claimed the group's other ranks still run, where their pids can be
//   seen (the same host, boot and pid namespace, each known), and posts the
//   gone rank as the refusal. A peer whose pid cannot be seen, or that
//   /proc and kill() cannot tell about, is waited for until the timeout, as
//   Gloo would. A claim is read once (claims never change), at most 16 new
//   ones a look.
// - A rank known from an earlier group (a split's parent) is watched so
//   from the start, before it claims here (watchKnownPeers).
// - A rank that cannot take part for a reason of its own (it cannot listen
//   on its address) posts it, naming itself, before it fails: the others
//   name it at once.
// - What it reads from the store is input: a claim or refusal is quoted
//   or escaped in messages as the IR's diagnostics are (ir/Quoting.h).
//
// Gloo connects a group's pairs on the joining thread while another
// (WatchedMesh.h) asks checkNow(), so every call takes the store's lock.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GROUPSTORE_H
#define COLLC_RUNTIME_GLOO_GROUPSTORE_H

#include "runtime/gloo/ClaimHolder.h"
#include "runtime/gloo/ProbedStore.h"

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace collc::rt::gloo {

/// Thrown by a GroupStore whose group cannot form; what() says why, and
/// \p Blamed names the rank whose failure it is, where one is.
struct JoinRefused : std::runtime_error {
  explicit JoinRefused(const std::string &Why, std::optional<size_t> Blamed = std::nullopt)
      : std::runtime_error(Why), Blamed(Blamed) {}
  std::optional<size_t> Blamed;
};
/// Thrown by a GroupStore whose group cannot form because rank \p Rank
/// stopped running; what() says so.
struct PeerGone : JoinRefused {
  PeerGone(size_t Rank, const std::string &Why) : JoinRefused(Why, Rank), Rank(Rank) {}
  size_t Rank;
};

class GroupStore : public ::gloo::rendezvous::Store {
public:
  /// The join's deadline is \p Timeout from now.
  GroupStore(ProbedStore &Inner, std::string Prefix, std::chrono::milliseconds Timeout);
  ~GroupStore() override;

  void set(const std::string &Key, const std::vector<char> &Data) override;
  std::vector<char> get(const std::string &Key) override;
  /// Waits until the join's deadline at most, whatever the caller asks;
  /// throws what checkNow() throws as soon as it does, and
  /// gloo::IoException at the deadline.
  void wait(const std::vector<std::string> &Keys) override;
  void wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &) override;

  /// Throws JoinRefused when the group was refused (PeerGone when the
  /// refusal names a gone peer), or PeerGone, after posting it, when a
  /// peer that claimed its rank no longer runs (looked at four times a
  /// second; nothing before claimRank). Never waits on a peer.
  void checkNow();
  /// Whether the join's deadline has passed.
  bool pastDeadline() const;
  /// After a failure inside Gloo, what the ranks know of its cause: throws
  /// as checkNow() does, reading every claim not read yet; returns when
  /// nothing is known.
  void throwKnownCause();

  /// The peers whose claims name a process of this machine (seen from
  /// here), by rank, reading every claim not read yet: once the group
  /// formed, the ones whose end health() can tell (GlooDriver.h).
  std::vector<std::pair<size_t, ClaimHolder>> peersSeenFromHere();

  /// Watches \p Holders, (rank of this group, its process) known from a
  /// group they joined before (the parent of a split), before they claim
  /// here: a rank killed between two joins is named at once, as one killed
  /// after it claimed, not at this join's deadline. Before claimRank.
  void watchKnownPeers(std::vector<std::pair<size_t, ClaimHolder>> Holders);

  /// Posts, as the group's refusal, that rank \p Rank cannot take part:
  /// \p Why. The ranks waiting fail at once, blaming it.
  void postFailure(size_t Rank, const std::string &Why);

  /// The group's ranks that no process has claimed yet (none before
  /// claimRank), ascending: at a join's timeout, the ranks that never came.
  std::vector<size_t> unclaimedRanks();

  /// Claims \p Rank of a group of \p Size for this process (see above).
  /// Throws JoinRefused, after posting why, when another process holds it,
  /// when the group's first rank said another size, or when the group was
  /// refused; StoreWriteFailed when the store cannot be written.
  void claimRank(size_t Rank, size_t Size);

private:
  std::string key(const std::string &Key) const { return Prefix + "/" + Key; }
  std::string claimKey(size_t R) const { return key("collc.claim." + std::to_string(R)); }
  /// checkNow under the lock, reading at most \p MaxReads claims not read
  /// before.
  void checkLocked(size_t MaxReads);
  /// A peer that claimed its rank and no longer runs, reading at most
  /// \p MaxReads claims not read before.
  std::optional<PeerGone> lookForGoneRank(size_t MaxReads);
  /// Posts \p Why as the group's refusal (the first one stays).
  void post(const std::string &Why);
  /// Posts \p Why and throws it.
  [[noreturn]] void refuse(const std::string &Why);

  std::mutex M; ///< guards Inner and what follows
  ProbedStore &Inner;
  std::string Prefix;
  std::chrono::steady_clock::time_point Deadline;
  /// This process's rank and the group's size, once claimed.
  size_t MyRank = 0, GroupSize = 0;
  std::chrono::steady_clock::time_point NextLivenessCheck;
  /// Known from an earlier group (watchKnownPeers), by rank of this one.
  std::vector<std::pair<size_t, ClaimHolder>> Known;
  struct PeerClaims;
  std::unique_ptr<PeerClaims> Peers;
};

} // namespace collc::rt::gloo

#endif
