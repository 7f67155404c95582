//===- runtime/shm/TeamRounds.cpp - A team's collectives above 1 KiB -------===//
//
// Members read and write each other's operands: those in an arena every
// member maps where they lie, the others through the member's staging
// buffer (copied in before it arrives, an all_reduce's result copied out
// after the completion). Staged operands go in rounds of the staging size:
// every member runs the same rounds, decided from the posts once all are in
// (one round when nobody stages, whatever the size).
//
//===----------------------------------------------------------------------===//

#include "runtime/shm/ShmTeam.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/local/Kernels.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>

using namespace llvm;
using namespace collc::rt::local;

namespace collc::rt::shm {

namespace {

/// Ops whose source holds a piece per member (rounds take a slice of each).
bool inPieces(OpCode C) { return C == OpCode::ReduceScatter || C == OpCode::AllToAll; }

} // namespace

/// Copies this member's part of the round [A, B) of \p Op into its staging
/// buffer for \p S.
static void stageIn(const TeamOp &Op, char *Staging, uint64_t A, uint64_t B, uint64_t SendTotal,
                    uint32_t N) {
  unsigned ES = elemTypeBytes(Op.Head.Elem);
  if (inPieces(Op.Head.Code)) {
    for (uint32_t J = 0; J != N; ++J)
      copyBytes(Staging + J * (B - A) * ES, Op.Src + (J * Op.Head.Count + A) * ES, (B - A) * ES,
                false);
    return;
  }
  if (Op.Head.Code == OpCode::AllToAllV)
    B = std::min(B, SendTotal);
  if (B > A)
    copyBytes(Staging, Op.Src + A * ES, (B - A) * ES, false);
}

Error ShmTeam::runLarge(const TeamOp &Op, uint64_t S0, const WaitPolicy &W, AcrossHosts Across) {
  const OpHeader &H = Op.Head;
  uint32_t N = size();
  unsigned ES = elemTypeBytes(H.Elem);
  bool V = H.Code == OpCode::AllToAllV, Reduces = H.Code == OpCode::AllReduce;
  // Counts and spans were checked by the driver: the sum fits the source.
  uint64_t SendTotal = 0;
  for (uint64_t C : Op.SendCounts)
    SendTotal += C;
  uint64_t PerRound = Layout.StagingBytes / (uint64_t(ES) * (inPieces(H.Code) ? N : 1));
  assert(PerRound > 0 && "staging holds a piece per member of the widest type");

  // This member's operands: by reference where every member maps them,
  // else staged (an all_reduce stages both when either is private: its
  // result is written by every member).
  bool HasSrc = bringsSource(H, Index);
  uint64_t SrcBytes =
      !HasSrc ? 0 : V ? SendTotal * ES : shareInputBytes(H.Code, H.Count, ES, int(N));
  std::optional<OperandRef> SrcRef = HasSrc ? shared(Op.Src, SrcBytes) : std::nullopt;
  std::optional<OperandRef> DstRef = Reduces ? shared(Op.Dst, H.Count * ES) : std::nullopt;
  bool Staged = HasSrc && (!SrcRef || (Reduces && !DstRef));

  SharedPost P;
  P.Code = uint8_t(H.Code);
  P.Elem = uint8_t(H.Elem);
  P.Op = uint8_t(H.Op);
  P.Flags = uint8_t((HasSrc ? HasSource : 0) | (Staged ? PostFlags::Staged : 0));
  P.Root = int32_t(H.Root);
  P.Scale = H.Scale;
  P.Count = V ? SendTotal : H.Count;
  if (!Staged && SrcRef)
    P.Src = *SrcRef;
  if (!Staged && DstRef)
    P.Dst = *DstRef;
  if (V) {
    uint64_t *C = countsOf(Index, S0);
    std::copy(Op.SendCounts.begin(), Op.SendCounts.end(), C);
    std::copy(Op.RecvCounts.begin(), Op.RecvCounts.end(), C + N);
  }
  if (Staged)
    stageIn(Op, staging(Index, S0), 0, std::min(PerRound, P.Count), SendTotal, N);
  publish(S0, P, nullptr, 0, /*Wake=*/true);
  if (Error E = waitAll(Counter::Arrived, S0, W, [&] { return opName(Op, S0); }))
    return E;
  SmallVector<PostCopy, 8> Posts;
  bool Agreed = false;
  if (Error E = copyPosts(Op, S0, Posts, Agreed))
    return Agreed ? finishRefused(std::move(E), S0, Op, W) : breakWith(std::move(E));

  // The rounds, from the posts (alike on every member).
  bool AnyStaged = any_of(Posts, [](const PostCopy &C) { return C.P.Flags & PostFlags::Staged; });
  uint64_t Length = H.Count;
  if (V)
    for (const PostCopy &C : Posts)
      Length = std::max(Length, C.P.Count);
  uint64_t Rounds = AnyStaged ? std::max<uint64_t>(1, divideCeil(Length, PerRound)) : 1;

  // Where the peers' referenced operands are, checked once for the whole
  // collective: every round's slice lies within.
  SmallVector<char *, 8> SrcBase(N, nullptr), DstBase(N, nullptr);
  SmallVector<const uint64_t *, 8> SendCounts(N, nullptr);
  for (uint32_t Q = 0; Q != N; ++Q) {
    const SharedPost &QP = Posts[Q].P;
    bool QStaged = QP.Flags & PostFlags::Staged;
    if (V)
      SendCounts[Q] = Posts[Q].Counts.data();
    if (bringsSource(H, Q) && !QStaged) {
      Optional<uint64_t> Need =
          V ? checkedMulUnsigned<uint64_t>(QP.Count, ES) : Optional<uint64_t>(SrcBytes);
      if (!Need)
        return breakWith(makeError(ErrorKind::Backend,
                                   formatv("all_to_all_v in group '{0}': {1} would send {2} "
                                           "elements of {3} bytes (a corrupt peer)",
                                           Group, memberName(Q), QP.Count, ES),
                                   Members[Q].GroupRank));
      // A source of this member's own is where it is (no lookup needed);
      // a broadcast's non-root sources carry nothing.
      Expected<char *> At = resolve(Q, QP.Src, *Need, "source", Op);
      if (!At)
        return breakWith(At.takeError());
      SrcBase[Q] = *At;
    }
    if (Reduces && !QStaged) {
      Expected<char *> At = resolve(Q, QP.Dst, H.Count * ES, "destination", Op);
      if (!At)
        return breakWith(At.takeError());
      DstBase[Q] = *At;
    }
  }

  uint64_t S = S0;
  for (uint64_t K = 0; K != Rounds; ++K) {
    uint64_t A = AnyStaged ? K * PerRound : 0;
    uint64_t B = AnyStaged ? std::min(Length, A + PerRound) : Length;
    if (K) {
      S = ++Seq;
      if (Staged)
        stageIn(Op, staging(Index, S), A, B, SendTotal, N);
      if (Error E = arriveRound(S, Op, W))
        return E;
    }
    SmallVector<const char *, 8> Srcs(N, nullptr);
    SmallVector<char *, 8> Dsts(N, nullptr);
    SmallVector<uint64_t, 8> Strides(N, H.Count);
    for (uint32_t Q = 0; Q != N; ++Q) {
      bool QStaged = Posts[Q].P.Flags & PostFlags::Staged;
      if (QStaged)
        Strides[Q] = B - A;
      if (bringsSource(H, Q))
        Srcs[Q] = QStaged ? staging(Q, S) : SrcBase[Q] + A * ES;
      if (Reduces)
        Dsts[Q] = QStaged ? staging(Q, S) : DstBase[Q] + A * ES;
    }
    if (!Reduces)
      Dsts[Index] = Op.Dst + (V ? 0 : A * ES);
    ShareView View;
    View.Head = H;
    View.Head.Count = V ? 0 : B - A;
    View.Ranks = int(N);
    View.Rank = int(Index);
    View.Srcs = Srcs.data();
    View.Dsts = Dsts.data();
    View.SrcStrides = Strides.data();
    View.DstStride = H.Count;
    View.SendCounts = SendCounts.data();
    View.RecvCounts = Op.RecvCounts.data();
    View.WindowBegin = A;
    View.WindowEnd = B;
    if (!Across) {
      runShare(View, /*Whole=*/false);
      if (Error E = complete(S, Op, W))
        return E;
      if (Reduces && Staged)
        copyBytes(Op.Dst + A * ES, staging(Index, S), (B - A) * ES, false);
      continue;
    }
    // Across hosts: this member's chunk of the host's reduction, where its
    // peers can read it (its staging or its shared result); the engine
    // completes it across hosts; every member gathers every chunk.
    auto [C0, C1] = allReduceChunk(B - A, ES, int(Index), int(N));
    char *Home = Dsts[Index];
    if (accumulatesWider(H.Elem)) {
      // Rounded once, after the hosts' partials are added (the
      // reference's arithmetic): a partial rounded to f16 may overflow.
      Widened.resize(C1 - C0);
      reduceWidened(H.Elem, H.Op, H.Scale, Srcs.data(), N, C0, Widened.data(), C1 - C0);
      if (C1 > C0)
        if (Error E = Across(reinterpret_cast<char *>(Widened.data()), ElemType::F32, C1 - C0))
          return breakWith(std::move(E));
      narrowFrom(H.Elem, Widened.data(), Home + C0 * ES, C1 - C0);
    } else {
      reduceInto(H.Elem, H.Op, H.Scale, Srcs.data(), N, C0, &Home, 1, C0, C1 - C0, false);
      if (C1 > C0)
        if (Error E = Across(Home + C0 * ES, H.Elem, C1 - C0))
          return breakWith(std::move(E));
    }
    if (Error E = complete(S, Op, W))
      return E;
    char *Out = Op.Dst + A * ES;
    for (uint32_t Q = 0; Q != N; ++Q) {
      auto [Q0, Q1] = allReduceChunk(B - A, ES, int(Q), int(N));
      copyBytes(Out + Q0 * ES, Dsts[Q] + Q0 * ES, (Q1 - Q0) * ES, false);
    }
    // Nobody reads a chunk any more once everyone is here.
    S = ++Seq;
    if (Error E = arriveRound(S, Op, W))
      return E;
  }
  return Error::success();
}

} // namespace collc::rt::shm
