//===- runtime/shm/ShmTeam.cpp - The processes of one group on one host ----===//
//
// The rules of the segment's buffers, as for the local backend's: a
// member's post, mailbox, inline buffer, counts and staging buffer
// alternate between two copies by the parity of the collective's (or
// round's) number, so a member may write those of number s + 1 while a
// slower peer still reads those of s; it writes those of s + 2 only after
// every member arrived at s + 1, i.e. finished s. A large collective ends
// with a completion rendezvous, so nobody's operands are still read when
// its call returns.
//
//===----------------------------------------------------------------------===//

#include "runtime/shm/ShmTeam.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/local/Kernels.h"
#include "runtime/local/MailboxFill.h"
#include "runtime/shm/SharedArena.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace llvm;
using namespace collc::rt::local;

namespace collc::rt::shm {

namespace {

constexpr uint64_t MailboxBytes = sizeof(Mailbox::Data);
constexpr unsigned NumErrorKinds = unsigned(ErrorKind::Backend) + 1;

bool inlineOff() {
  static const bool Off = getenv("COLLC_NO_INLINE") != nullptr;
  return Off;
}

std::vector<int32_t> pidsOf(const std::vector<ShmTeam::Member> &Ms) {
  std::vector<int32_t> Pids;
  for (const ShmTeam::Member &M : Ms)
    Pids.push_back(M.Pid);
  return Pids;
}

/// What member \p Index brings to \p Op, its operands in its slot.
SharedPost postOf(const TeamOp &Op, uint32_t Index) {
  SharedPost P;
  P.Code = uint8_t(Op.Head.Code);
  P.Elem = uint8_t(Op.Head.Elem);
  P.Op = uint8_t(Op.Head.Op);
  P.Flags = bringsSource(Op.Head, Index) ? HasSource : 0;
  P.Root = int32_t(Op.Head.Root);
  P.Scale = Op.Head.Scale;
  P.Count = Op.Head.Count;
  return P;
}

OpHeader headerOf(const SharedPost &P) {
  return {OpCode(P.Code), ElemType(P.Elem), ReduceOp(P.Op), P.Scale, P.Count, P.Root};
}

/// Whether the enum fields a peer wrote are values of their enums.
bool inRange(uint8_t Code, uint8_t Elem, uint8_t Op) {
  return Code < NumOpCodes && Elem < NumElemTypes && Op < NumReduceOps;
}

} // namespace

ShmTeam::ShmTeam(std::string G, uint32_t I, std::vector<Member> Ms, SharedSegment S, TeamLayout L,
                 bool Over)
    : Group(std::move(G)), Index(I), Members(std::move(Ms)), Seg(std::move(S)), Layout(L),
      Oversubscribed(Over), SentPieces(new std::atomic<uint64_t>[L.Members]()),
      TakenPieces(new std::atomic<uint64_t>[L.Members]()), Watch(pidsOf(Members)) {}

ShmTeam::~ShmTeam() = default;

std::string ShmTeam::memberName(uint32_t I) const {
  return formatv("rank {0}", Members[I].GroupRank).str();
}

std::string ShmTeam::opName(const TeamOp &Op, uint64_t S) const {
  return formatv("{0} #{1}", opCodeName(Op.Head.Code), S).str();
}

// --- failure and liveness -----------------------------------------------------

void ShmTeam::fail(Error Why) {
  ErrorParts Cause = takeErrorParts(std::move(Why), ErrorKind::Broken);
  TeamHeader &H = header();
  uint32_t Healthy = 0;
  if (!H.FailState.compare_exchange_strong(Healthy, 1, std::memory_order_acq_rel))
    return; // the first cause stays
  H.FailKind = uint32_t(Cause.Kind);
  H.FailRank = int32_t(Cause.Peer);
  size_t N = std::min(Cause.Text.size(), sizeof(H.FailWhy) - 1);
  std::memcpy(H.FailWhy, Cause.Text.data(), N);
  H.FailWhy[N] = 0;
  H.FailState.store(2, std::memory_order_release);
  ring(H.Bell, BellScope::Shared);
}

Error ShmTeam::breakWith(Error Why) {
  fail(std::move(Why));
  return brokenError(/*InFlight=*/true);
}

Error ShmTeam::brokenError(bool InFlight) const {
  const TeamHeader &H = header();
  // Written by whichever member failed first, possibly a corrupt one: the
  // text is bounded, the kind and the blamed rank checked.
  char Why[sizeof(H.FailWhy) + 1];
  std::memcpy(Why, H.FailWhy, sizeof(H.FailWhy));
  Why[sizeof(H.FailWhy)] = 0;
  uint32_t Kind = H.FailKind;
  int64_t Peer = H.FailRank;
  if (!any_of(Members, [&](const Member &M) { return M.GroupRank == Peer; }))
    Peer = -1;
  ErrorKind K = Kind < NumErrorKinds ? ErrorKind(Kind) : ErrorKind::Broken;
  return makeError(InFlight ? K : ErrorKind::Broken,
                   formatv("group '{0}' is broken: {1}", Group, StringRef(Why)).str(), Peer);
}

Error ShmTeam::interrupt(std::chrono::steady_clock::time_point Now,
                         function_ref<SmallVector<uint32_t, 8>()> Late) {
  if (header().FailState.load(std::memory_order_acquire) == 2)
    return brokenError(/*InFlight=*/true);
  // The processes awaited, at most every 5 ms (each look reads /proc).
  std::unique_lock<std::mutex> L(WatchLock, std::try_to_lock);
  if (!L.owns_lock() || Now - LastWatch < std::chrono::milliseconds(5))
    return Error::success();
  LastWatch = Now;
  for (uint32_t Q : Late()) {
    std::optional<std::string> Why = Watch.lost(Q, Now);
    if (!Why)
      continue;
    std::string Msg = formatv("{0} of group '{1}' is gone: {2}", memberName(Q), Group, *Why);
    // Every other member learns it at once, as from a member that failed.
    fail(makeError(ErrorKind::PeerLost, Msg, Members[Q].GroupRank));
    return makeError(ErrorKind::PeerLost, Msg, Members[Q].GroupRank);
  }
  return Error::success();
}

Error ShmTeam::health() {
  if (header().FailState.load(std::memory_order_acquire) == 2)
    return brokenError(/*InFlight=*/false);
  std::lock_guard<std::mutex> L(WatchLock);
  for (uint32_t Q = 0; Q != size(); ++Q)
    if (Q != Index && Watch.exited(Q))
      return makeError(ErrorKind::PeerLost,
                       formatv("{0} of group '{1}' is gone: its process (pid {2}) has exited",
                               memberName(Q), Group, Members[Q].Pid),
                       Members[Q].GroupRank);
  return Error::success();
}

// --- rendezvous -----------------------------------------------------------------

Expected<WaitOutcome> ShmTeam::waitOn(function_ref<bool()> Ready,
                                      function_ref<SmallVector<uint32_t, 8>()> Late,
                                      const WaitPolicy &W) {
  return waitAtDoorbell(header().Bell, BellScope::Shared, Ready, W, Oversubscribed,
                        [&](std::chrono::steady_clock::time_point Now) {
                          return interrupt(Now, Late);
                        });
}

Error ShmTeam::waitAll(Counter C, uint64_t S, const WaitPolicy &W,
                       function_ref<std::string()> What) {
  auto Reached = [&](uint32_t Q) {
    MemberSlot &M = slot(Q);
    switch (C) {
    case Counter::Arrived:
      return M.Arrived.load(std::memory_order_acquire) >= S;
    case Counter::Done:
      return M.Done.load(std::memory_order_acquire) >= S;
    case Counter::Mailbox:
      return M.Boxes[S & 1].Seq.load(std::memory_order_acquire) >= S;
    }
    return false;
  };
  auto Late = [&] {
    SmallVector<uint32_t, 8> L;
    for (uint32_t Q = 0; Q != size(); ++Q)
      if (!Reached(Q))
        L.push_back(Q);
    return L;
  };
  auto Ready = [&] {
    for (uint32_t Q = 0; Q != size(); ++Q)
      if (!Reached(Q))
        return false;
    return true;
  };
  Expected<WaitOutcome> Outcome = waitOn(Ready, Late, W);
  if (!Outcome)
    return Outcome.takeError();
  if (*Outcome == WaitOutcome::Ready)
    return Error::success();
  SmallVector<int32_t, 8> Ranks;
  for (uint32_t Q : Late())
    Ranks.push_back(Members[Q].GroupRank);
  int64_t Blame = Ranks.empty() ? -1 : Ranks.front();
  std::string Msg = formatv("{0} of group '{1}' did not arrive at {2} within {3} ms",
                            local::lateRanks(Ranks), Group, What(), W.Timeout.count());
  // Every other member waiting on the team learns the same cause.
  fail(makeError(ErrorKind::Timeout, Msg, Blame));
  return makeError(ErrorKind::Timeout, Msg, Blame);
}

void ShmTeam::publish(uint64_t S, const SharedPost &P, const char *Data, uint64_t Bytes,
                      bool Wake) {
  MemberSlot &M = slot(Index);
  M.Posts[S & 1] = P;
  // Every arrival fills both the post and the mailbox (MailboxFill.h).
  local::fillMailbox(M.Boxes[S & 1], P, Data, Bytes, S);
  M.Arrived.store(S, std::memory_order_release);
  if (Wake)
    ring(header().Bell, BellScope::Shared);
}

Error ShmTeam::arriveRound(uint64_t S, const TeamOp &Op, const WaitPolicy &W) {
  slot(Index).Arrived.store(S, std::memory_order_release);
  ring(header().Bell, BellScope::Shared);
  return waitAll(Counter::Arrived, S, W, [&] { return opName(Op, S); });
}

Error ShmTeam::complete(uint64_t S, const TeamOp &Op, const WaitPolicy &W) {
  storeFence(); // streaming stores land before anyone reads them
  slot(Index).Done.store(S, std::memory_order_seq_cst);
  ring(header().Bell, BellScope::Shared);
  return waitAll(Counter::Done, S, W, [&] { return "the end of " + opName(Op, S); });
}

Error ShmTeam::finishRefused(Error Mismatch, uint64_t S, const TeamOp &Op, const WaitPolicy &W) {
  // Every member reached the same verdict: finish the rendezvous together
  // so the team stays usable, and refuse the operation.
  if (Error E = complete(S, Op, W)) {
    consumeError(std::move(Mismatch));
    return E;
  }
  return Mismatch;
}

Error ShmTeam::copyPosts(const TeamOp &Op, uint64_t S, SmallVectorImpl<PostCopy> &Posts,
                         bool &Agreed) {
  Agreed = false;
  uint32_t N = size();
  Posts.resize(N);
  const OpHeader &Mine = Op.Head;
  bool V = Mine.Code == OpCode::AllToAllV;
  for (uint32_t Q = 0; Q != N; ++Q) {
    std::memcpy(&Posts[Q].P, &slot(Q).Posts[S & 1], sizeof(SharedPost));
    const SharedPost &P = Posts[Q].P;
    if (!inRange(P.Code, P.Elem, P.Op))
      return makeError(ErrorKind::Backend,
                       formatv("{0} in group '{1}': {2} posted op {3}, type {4}, reduction {5}, "
                               "which are not all values collc knows (a corrupt peer)",
                               opName(Op, S), Group, memberName(Q), P.Code, P.Elem, P.Op),
                       Members[Q].GroupRank);
    std::string What = opMismatch(Mine, int(Members[Index].GroupRank), headerOf(P),
                                  int(Members[Q].GroupRank));
    if (!What.empty()) {
      Agreed = true;
      return makeError(ErrorKind::Mismatch,
                       formatv("{0} in group '{1}' does not match across ranks: {2}",
                               opCodeName(Mine.Code), Group, What),
                       Members[Q].GroupRank);
    }
    if (bool(P.Flags & HasSource) != bringsSource(Mine, Q) || (P.Flags & ~(HasSource | Staged)))
      return makeError(ErrorKind::Backend,
                       formatv("{0} in group '{1}': {2} posted flags {3:x} (a corrupt peer)",
                               opName(Op, S), Group, memberName(Q), P.Flags),
                       Members[Q].GroupRank);
    if (V) {
      const uint64_t *C = countsOf(Q, S);
      Posts[Q].Counts.assign(C, C + 2 * N);
    }
  }
  if (!V)
    return Error::success();
  // Every member's sends to r are r's receives, and a member sends what it
  // said it sends (the sum, checked): else every member refuses alike.
  for (uint32_t From = 0; From != N; ++From) {
    uint64_t Sum = 0;
    for (uint32_t To = 0; To != N; ++To) {
      uint64_t Sent = Posts[From].Counts[To], Expected = Posts[To].Counts[N + From];
      Optional<uint64_t> Next = checkedAddUnsigned<uint64_t>(Sum, Sent);
      if (!Next)
        return makeError(ErrorKind::Backend,
                         formatv("all_to_all_v in group '{0}': {1}'s counts overflow (a corrupt "
                                 "peer)",
                                 Group, memberName(From)),
                         Members[From].GroupRank);
      Sum = *Next;
      if (Sent != Expected) {
        Agreed = true;
        return makeError(ErrorKind::Mismatch,
                         formatv("all_to_all_v in group '{0}': {1} sends {2} elements to {3}, "
                                 "which expects {4}",
                                 Group, memberName(From), Sent, memberName(To), Expected),
                         Members[From == Index ? To : From].GroupRank);
      }
    }
    if (Sum != Posts[From].P.Count)
      return makeError(ErrorKind::Backend,
                       formatv("all_to_all_v in group '{0}': {1} posted {2} elements to send, "
                               "its counts sum to {3} (a corrupt peer)",
                               Group, memberName(From), Posts[From].P.Count, Sum),
                       Members[From].GroupRank);
  }
  return Error::success();
}

// --- operands in shared arenas ------------------------------------------------

void ShmTeam::refreshArenas() {
  if (uint64_t G = arenaGeneration(); G != ArenaGeneration) {
    Arenas.clear();
    for (const ArenaView &A : arenasMappedByAll(pidsOf(Members)))
      Arenas.push_back({A.Id, A.Base, A.Bytes});
    ArenaGeneration = G;
  }
}

std::optional<OperandRef> ShmTeam::shared(const void *P, uint64_t Bytes) {
  if (!P || Bytes == 0)
    return std::nullopt;
  std::lock_guard<std::mutex> L(ArenaLock);
  refreshArenas();
  const char *C = static_cast<const char *>(P);
  for (const UsableArena &A : Arenas)
    if (C >= A.Base && C < A.Base + A.Bytes && Bytes <= uint64_t(A.Base + A.Bytes - C))
      return OperandRef{A.Id, uint64_t(C - A.Base), Bytes};
  return std::nullopt;
}

Expected<char *> ShmTeam::resolve(uint32_t Q, const OperandRef &Ref, uint64_t Need, StringRef What,
                                  const TeamOp &Op) {
  std::lock_guard<std::mutex> L(ArenaLock);
  refreshArenas();
  for (const UsableArena &A : Arenas)
    if (A.Id == Ref.Arena) {
      if (Ref.Bytes >= Need && Ref.Offset <= A.Bytes && Need <= A.Bytes - Ref.Offset)
        return A.Base + Ref.Offset;
      return makeError(ErrorKind::Backend,
                       formatv("{0} in group '{1}': {2} posted its {3} at bytes [{4}, +{5}) of "
                               "shared arena {6:x}, which holds {7} bytes; the operation needs "
                               "{8} (a corrupt peer)",
                               opCodeName(Op.Head.Code), Group, memberName(Q), What, Ref.Offset,
                               Ref.Bytes, Ref.Arena, A.Bytes, Need),
                       Members[Q].GroupRank);
    }
  return makeError(ErrorKind::Backend,
                   formatv("{0} in group '{1}': {2} posted its {3} in shared arena {4:x}, which "
                           "not every member of the team maps (a corrupt or foreign peer)",
                           opCodeName(Op.Head.Code), Group, memberName(Q), What, Ref.Arena),
                   Members[Q].GroupRank);
}

// --- collectives --------------------------------------------------------------

Error ShmTeam::collective(const TeamOp &Op, const WaitPolicy &W) {
  if (header().FailState.load(std::memory_order_acquire) == 2)
    return brokenError(/*InFlight=*/false);
  uint64_t S = ++Seq;
  uint64_t In = shareInputBytes(Op.Head.Code, Op.Head.Count, elemTypeBytes(Op.Head.Elem),
                                int(size()));
  bool Counted = Op.Head.Code == OpCode::AllToAllV; // its input the counts size
  if (!Counted && In <= MailboxBytes)
    return runTiny(Op, S, W);
  if (!Counted && !inlineOff() && In <= MemberSlot::InlineBytes)
    return runInline(Op, S, W);
  return runLarge(Op, S, W, nullptr);
}

Error ShmTeam::allReduceAround(const TeamOp &Op, const WaitPolicy &W, AcrossHosts Across) {
  if (header().FailState.load(std::memory_order_acquire) == 2)
    return brokenError(/*InFlight=*/false);
  return runLarge(Op, ++Seq, W, Across);
}

Error ShmTeam::runTiny(const TeamOp &Op, uint64_t S, const WaitPolicy &W) {
  uint32_t N = size();
  bool HasSrc = bringsSource(Op.Head, Index) && Op.Src;
  uint64_t Bytes =
      HasSrc ? shareInputBytes(Op.Head.Code, Op.Head.Count, elemTypeBytes(Op.Head.Elem), int(N))
             : 0;
  SharedPost P = postOf(Op, Index);
  // No ring before the wait: its fence would stall until the peers' copies
  // of the mailbox line are invalidated, the whole latency of this path.
  // Sleepers are woken after it: a sleeper waits for this member too.
  publish(S, P, Op.Src, Bytes, /*Wake=*/false);
  Error E = waitAll(Counter::Mailbox, S, W, [&] { return opName(Op, S); });
  ring(header().Bell, BellScope::Shared);
  if (E)
    return E;
  // The mailboxes, copied once: only the copies are used.
  struct BoxCopy {
    uint8_t Code, Elem, Op;
    OpHeader Head;
    char Data[MailboxBytes];
  };
  SmallVector<BoxCopy, 8> Boxes(N);
  SmallVector<const char *, 8> Srcs(N);
  for (uint32_t Q = 0; Q != N; ++Q) {
    const Mailbox &B = slot(Q).Boxes[S & 1];
    BoxCopy &C = Boxes[Q];
    C.Code = B.Code;
    C.Elem = B.Elem;
    C.Op = B.Op;
    C.Head = {OpCode(C.Code), ElemType(C.Elem), ReduceOp(C.Op), B.Scale, B.Count, B.Root};
    std::memcpy(C.Data, B.Data, MailboxBytes);
    Srcs[Q] = C.Data;
    if (!inRange(C.Code, C.Elem, C.Op))
      return breakWith(makeError(ErrorKind::Backend,
                                 formatv("{0} in group '{1}': {2} posted op {3}, type {4}, "
                                         "reduction {5}, which are not all values collc knows "
                                         "(a corrupt peer)",
                                         opName(Op, S), Group, memberName(Q), C.Code, C.Elem,
                                         C.Op),
                                 Members[Q].GroupRank));
    std::string What =
        opMismatch(Op.Head, int(Members[Index].GroupRank), C.Head, int(Members[Q].GroupRank));
    if (!What.empty())
      return finishRefused(makeError(ErrorKind::Mismatch,
                                     formatv("{0} in group '{1}' does not match across ranks: "
                                             "{2}",
                                             opCodeName(Op.Head.Code), Group, What),
                                     Members[Q].GroupRank),
                           S, Op, W);
  }
  runWhole(Op, Srcs);
  return Error::success();
}

void ShmTeam::runWhole(const TeamOp &Op, ArrayRef<const char *> Srcs) {
  SmallVector<char *, 8> Dsts(size(), nullptr);
  Dsts[Index] = Op.Dst;
  ShareView V;
  V.Head = Op.Head;
  V.Ranks = int(size());
  V.Rank = int(Index);
  V.Srcs = Srcs.data();
  V.Dsts = Dsts.data();
  runShare(V, /*Whole=*/true);
}

Error ShmTeam::runInline(const TeamOp &Op, uint64_t S, const WaitPolicy &W) {
  uint32_t N = size();
  unsigned ES = elemTypeBytes(Op.Head.Elem);
  if (bringsSource(Op.Head, Index) && Op.Src)
    copyBytes(slot(Index).Inline[S & 1], Op.Src,
              shareInputBytes(Op.Head.Code, Op.Head.Count, ES, int(N)), false);
  SharedPost P = postOf(Op, Index);
  publish(S, P, nullptr, 0, /*Wake=*/true);
  if (Error E = waitAll(Counter::Arrived, S, W, [&] { return opName(Op, S); }))
    return E;
  SmallVector<PostCopy, 8> Posts;
  bool Agreed = false;
  if (Error E = copyPosts(Op, S, Posts, Agreed)) {
    if (Agreed)
      return finishRefused(std::move(E), S, Op, W);
    return breakWith(std::move(E));
  }
  // Each member computes its own whole result from the inline copies
  // (their places come from the layout, never from a post).
  SmallVector<const char *, 8> Srcs(N);
  for (uint32_t Q = 0; Q != N; ++Q)
    Srcs[Q] = slot(Q).Inline[S & 1];
  runWhole(Op, Srcs);
  return Error::success();
}

} // namespace collc::rt::shm
