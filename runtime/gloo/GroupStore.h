//===- runtime/gloo/GroupStore.h - A gloo group's view of the rendezvous -*- C++ -*-===//
//
// Where the ranks of one gloo group meet: the process's store (GlooStore.h,
// ProbedStore.h) under the group's prefix (as Gloo's PrefixStore names
// keys: prefix/key), with three things Gloo's PrefixStore lacks.
//
// - Waits take the group's timeout. Gloo's stores wait 30 s where their
//   caller names no timeout (a get, a wait without one), and count whole
//   seconds where it does (a 100 ms wait lasts 1 s); before this store a
//   join was seen to wait Gloo's 30 s whatever collc's timeout. Here every
//   wait takes the group's (COLLC_TIMEOUT_MS, --timeout-ms, an executor's
//   option), counted in milliseconds.
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
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GROUPSTORE_H
#define COLLC_RUNTIME_GLOO_GROUPSTORE_H

#include "runtime/gloo/ProbedStore.h"

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace collc::rt::gloo {

/// Thrown by a GroupStore whose group cannot form; what() says why.
struct JoinRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Thrown by a GroupStore whose group cannot form because rank \p Rank
/// stopped running; what() says so.
struct PeerGone : JoinRefused {
  PeerGone(size_t Rank, const std::string &Why) : JoinRefused(Why), Rank(Rank) {}
  size_t Rank;
};

class GroupStore : public ::gloo::rendezvous::Store {
public:
  GroupStore(ProbedStore &Inner, std::string Prefix, std::chrono::milliseconds Timeout);
  ~GroupStore() override;

  void set(const std::string &Key, const std::vector<char> &Data) override;
  std::vector<char> get(const std::string &Key) override;
  /// Waits up to the group's timeout, whatever the caller asks; throws
  /// JoinRefused as soon as the group is refused (PeerGone when a peer
  /// stopped running), and gloo::IoException at the timeout.
  void wait(const std::vector<std::string> &Keys) override;
  void wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &) override;

  /// A peer that claimed its rank and no longer runs (see above), if one
  /// does not; nothing before claimRank. Reads every claim not read yet.
  std::optional<PeerGone> goneRank();

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
  /// goneRank, reading at most \p MaxReads claims not read before.
  std::optional<PeerGone> lookForGoneRank(size_t MaxReads);
  /// Posts \p Why as the group's refusal (the first one stays).
  void post(const std::string &Why);
  /// Posts \p Why and throws it.
  [[noreturn]] void refuse(const std::string &Why);

  ProbedStore &Inner;
  std::string Prefix;
  std::chrono::milliseconds Timeout;
  /// This process's rank and the group's size, once claimed.
  size_t MyRank = 0, GroupSize = 0;
  std::chrono::steady_clock::time_point NextLivenessCheck;
  struct PeerClaims;
  std::unique_ptr<PeerClaims> Peers;
};

} // namespace collc::rt::gloo

#endif
