//===- runtime/gloo/GroupStore.cpp - A gloo group's view of the rendezvous -===//

#include "runtime/gloo/GroupStore.h"

#include "ir/Quoting.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <gloo/common/error.h>

#include <optional>
#include <thread>

using namespace llvm;

namespace collc::rt::gloo {

namespace {

/// Under the group's prefix: why the group cannot form, once a rank knows.
constexpr const char *RefusalKey = "collc.refused";
/// How often a wait asks the store again (as Gloo's own stores do).
constexpr std::chrono::milliseconds PollEvery{10};
/// How often a wait looks whether the peers that claimed their ranks still
/// run, and how many claims not yet seen a look reads at most (claims never
/// change: one read is kept; a large group's claims are read over several
/// looks, so that its ranks load the store no more than their key polls).
constexpr std::chrono::milliseconds LivenessEvery{250};
constexpr size_t ClaimReadsPerLook = 16;

/// A refusal that names a rank starts with one of these and the rank, then
/// a space: the ranks that learn of it blame that rank too (one atomic
/// claim), as gone (PeerGone) or as failed for a reason of its own.
constexpr StringRef GonePrefix = "collc.gone.", FailedPrefix = "collc.failed.";

struct Refusal {
  std::optional<size_t> Rank;
  bool Gone = false;
  std::string Why;
};
Refusal parseRefusal(StringRef Text) {
  for (StringRef Prefix : {GonePrefix, FailedPrefix}) {
    StringRef Rest = Text;
    size_t Rank;
    if (Rest.consume_front(Prefix)) {
      auto [Number, Why] = Rest.split(' ');
      if (!Number.getAsInteger(10, Rank))
        return {Rank, Prefix == GonePrefix, Why.str()};
    }
  }
  return {std::nullopt, false, Text.str()};
}

/// Throws the group's refusal \p Text, after \p Lead. The text comes from
/// the store: escaped, so that a NUL or a terminal's control bytes in it
/// reach no one's terminal.
[[noreturn]] void throwRefusal(StringRef Text, const std::string &Lead) {
  Refusal R = parseRefusal(Text);
  std::string Why = Lead + escapeForMessage(R.Why);
  if (R.Gone)
    throw PeerGone(*R.Rank, Why);
  throw JoinRefused(Why, R.Rank);
}

} // namespace

GroupStore::GroupStore(ProbedStore &Inner, std::string Prefix, std::chrono::milliseconds Timeout)
    : Inner(Inner), Prefix(std::move(Prefix)),
      Deadline(std::chrono::steady_clock::now() + Timeout) {
  // A store that stops answering fails a call after the group's timeout.
  Inner.setTimeout(Timeout);
}

void GroupStore::set(const std::string &Key, const std::vector<char> &Data) {
  std::lock_guard<std::mutex> L(M);
  Inner.set(key(Key), Data);
}

std::vector<char> GroupStore::get(const std::string &Key) {
  wait({Key});
  std::lock_guard<std::mutex> L(M);
  return Inner.get(key(Key));
}

void GroupStore::wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &) {
  wait(Keys);
}

void GroupStore::wait(const std::vector<std::string> &Keys) {
  std::vector<std::string> Full;
  for (const std::string &K : Keys)
    Full.push_back(key(K));
  for (;;) {
    {
      std::lock_guard<std::mutex> L(M);
      if (Inner.has(Full))
        return;
      checkLocked(ClaimReadsPerLook);
    }
    if (pastDeadline())
      throw ::gloo::IoException(
          formatv("Wait timeout for key(s): {0}", join(Keys.begin(), Keys.end(), ", ")).str());
    std::this_thread::sleep_for(PollEvery);
  }
}

void GroupStore::checkNow() {
  std::lock_guard<std::mutex> L(M);
  checkLocked(ClaimReadsPerLook);
}

bool GroupStore::pastDeadline() const { return std::chrono::steady_clock::now() >= Deadline; }

void GroupStore::throwKnownCause() {
  std::lock_guard<std::mutex> L(M);
  NextLivenessCheck = {};
  checkLocked(GroupSize);
}

void GroupStore::checkLocked(size_t MaxReads) {
  if (std::optional<std::string> Why = Inner.claimed(key(RefusalKey)))
    throwRefusal(*Why, "");
  auto Now = std::chrono::steady_clock::now();
  if (Now < NextLivenessCheck)
    return;
  NextLivenessCheck = Now + LivenessEvery;
  if (std::optional<PeerGone> Gone = lookForGoneRank(MaxReads)) {
    post(formatv("{0}{1} {2}", GonePrefix, Gone->Rank, Gone->what()).str());
    throw *Gone;
  }
}

void GroupStore::postFailure(size_t Rank, const std::string &Why) {
  std::lock_guard<std::mutex> L(M);
  post(formatv("{0}{1} {2}", FailedPrefix, Rank, Why).str());
}

std::vector<size_t> GroupStore::unclaimedRanks() {
  std::vector<size_t> Absent;
  for (size_t R = 0; R != GroupSize; ++R)
    if (!Inner.claimed(claimKey(R)))
      Absent.push_back(R);
  return Absent;
}

/// What a rank knows of its peers' claims (GroupStore::lookForGoneRank).
struct GroupStore::PeerClaims {
  /// Per rank: whether its claim was read (a claim never changes).
  std::vector<bool> Read;
  /// The claims read whose pids this process can see, by rank.
  std::vector<std::pair<size_t, ClaimHolder>> Local;
  /// Where the next look starts reading claims not yet read.
  size_t Next = 0;
};

GroupStore::~GroupStore() = default;

std::vector<std::pair<size_t, ClaimHolder>> GroupStore::peersSeenFromHere() {
  std::lock_guard<std::mutex> L(M);
  if (GroupSize == 0)
    return {};
  // Reads every claim not read yet (a formed group's are all there).
  (void)lookForGoneRank(GroupSize);
  return Peers->Local;
}

std::optional<PeerGone> GroupStore::lookForGoneRank(size_t MaxReads) {
  // Before this rank claimed its own, the group's size is not known.
  if (GroupSize == 0)
    return std::nullopt;
  if (!Peers) {
    Peers = std::make_unique<PeerClaims>();
    Peers->Read.assign(GroupSize, false);
    Peers->Read[MyRank] = true;
  }
  // The claims not read yet, from where the last look stopped, at most
  // MaxReads of them: a claim not there yet is read again next time.
  size_t From = Peers->Next;
  for (size_t Step = 0, Reads = 0; Step != GroupSize && Reads != MaxReads; ++Step) {
    size_t R = (From + Step) % GroupSize;
    if (Peers->Read[R])
      continue;
    ++Reads;
    Peers->Next = (R + 1) % GroupSize;
    std::optional<std::string> Text = Inner.claimed(claimKey(R));
    if (!Text)
      continue;
    Peers->Read[R] = true;
    // A claim collc did not write, or one of a process not seen from here:
    // nothing to watch.
    if (std::optional<ClaimHolder> Holder = ClaimHolder::parse(*Text);
        Holder && Holder->seenFromHere())
      Peers->Local.emplace_back(R, std::move(*Holder));
  }
  for (const auto &[R, Holder] : Peers->Local)
    if (Holder.gone())
      return PeerGone(R, formatv("rank {0} (process {1}) is not running: it claimed its rank and "
                                 "ended before the group formed (killed, or failed), or the "
                                 "rendezvous {2} holds the keys of an earlier run (give each run "
                                 "a new or empty {2})",
                                 R, Holder.name(), Inner.kind()));
  // Ranks known from an earlier group that have not claimed here yet.
  for (const auto &[R, Holder] : Known)
    if (R < GroupSize && !Peers->Read[R] && Holder.gone())
      return PeerGone(R, formatv("rank {0} (process {1}) is not running: it ended before it "
                                 "joined this group (killed, or failed), after it joined the "
                                 "group this one was split from",
                                 R, Holder.name()));
  return std::nullopt;
}

void GroupStore::watchKnownPeers(std::vector<std::pair<size_t, ClaimHolder>> Holders) {
  std::lock_guard<std::mutex> L(M);
  Known = std::move(Holders);
}

void GroupStore::post(const std::string &Why) {
  try {
    Inner.claim(key(RefusalKey), Why);
  } catch (const StoreWriteFailed &) {
    // This rank is refused all the same; the others wait out their timeout.
  }
}

void GroupStore::refuse(const std::string &Why) {
  post(Why);
  throw JoinRefused(Why);
}

void GroupStore::claimRank(size_t Rank, size_t Size) {
  std::lock_guard<std::mutex> L(M);
  const ClaimHolder &Me = ClaimHolder::thisProcess();
  std::string ClaimKey = claimKey(Rank);
  ProbedStore::Claim C = Inner.claim(ClaimKey, Me.text());
  const char *Kind = Inner.kind();
  if (C.Set) {
    MyRank = Rank;
    GroupSize = Size;
    // Refused by a rank of this run (one started as this rank too, just
    // now, or any other), or by an earlier run whose ranks were not this one.
    if (std::optional<std::string> Why = Inner.claimed(key(RefusalKey)))
      throwRefusal(*Why, "the group was refused: ");
    ProbedStore::Claim Sized = Inner.claim(key("collc.size"), std::to_string(Size));
    size_t First;
    if (!Sized.Set && StringRef(Sized.Holder).getAsInteger(10, First))
      refuse(formatv("the rendezvous {0} holds a group size that collc did not write ({1} at "
                     "{2}): expected a number (give each run a new or empty {0})",
                     Kind, quoteString(StringRef(Sized.Holder).take_front(80)),
                     Inner.where(key("collc.size"))));
    if (!Sized.Set && First != Size)
      refuse(formatv("its ranks were started with different sizes: {0} (the rank that came "
                     "first) and {1} (process {2}, rank {3})",
                     First, Size, Me.name(), Rank));
    return;
  }
  std::optional<ClaimHolder> Parsed = ClaimHolder::parse(C.Holder);
  if (!Parsed)
    refuse(formatv(
        "the rendezvous {0} holds a claim of rank {1} that collc did not write "
        "({2} at {3}): expected HOST:PID START NONCE BOOT PIDNS (give each run a new or empty "
        "{0})",
        Kind, Rank, quoteString(StringRef(C.Holder).take_front(80)), Inner.where(ClaimKey)));
  const ClaimHolder &Holder = *Parsed;
  if (Holder.Host == Me.Host && Holder.Pid == Me.Pid && Holder.Nonce == Me.Nonce)
    refuse(formatv("this process ({0}) already joined this group as rank {1} (a group's name "
                   "joins once per rendezvous)",
                   Me.name(), Rank));
  if (Holder.runningHere())
    refuse(formatv("two running processes were started as rank {0}: {1}, which holds it, and "
                   "{2} (each process of a run needs a rank of its own)",
                   Rank, Holder.name(), Me.name()));
  if (Holder.seenFromHere())
    refuse(formatv("the rendezvous {0} holds the keys of an earlier run (give each run a new or "
                   "empty {0}; rank {1} was claimed there by process {2}, which is not running)",
                   Kind, Rank, Holder.name()));
  refuse(formatv("rank {0} is held by process {1}, which this process cannot see (another host, "
                 "boot or pid namespace), and {2} was started as rank {0} too: either two "
                 "processes of this run have that rank, or the rendezvous {3} "
                 "holds the keys of an earlier run (give each run a new or empty {3})",
                 Rank, Holder.name(), Me.name(), Kind));
}

} // namespace collc::rt::gloo
