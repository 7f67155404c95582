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

class ShmTeam::LargeRun {
public:
  LargeRun(ShmTeam &T, const TeamOp &Op, uint64_t S0, const WaitPolicy &W)
      : T(T), Op(Op), H(Op.Head), S0(S0), W(W), N(T.size()), ES(elemTypeBytes(H.Elem)),
        V(H.Code == OpCode::AllToAllV), Reduces(H.Code == OpCode::AllReduce) {
    // Counts and spans were checked by the driver: the sum fits the source.
    for (uint64_t C : Op.SendCounts)
      SendTotal += C;
    PerRound = T.Layout.StagingBytes / (uint64_t(ES) * (inPieces(H.Code) ? N : 1));
    assert(PerRound > 0 && "staging holds a piece per member of the widest type");
  }

  /// Posts this member's operands (staging the first round's where they
  /// are private), waits for every member's post, and decides the rounds
  /// from the posts (alike on every member).
  Error post() {
    // By reference where every member maps them, else staged (an
    // all_reduce stages both when either is private: its result is written
    // by every member).
    bool HasSrc = bringsSource(H, T.Index);
    SrcBytes = !HasSrc ? 0 : V ? SendTotal * ES : shareInputBytes(H.Code, H.Count, ES, int(N));
    std::optional<OperandRef> SrcRef = HasSrc ? T.shared(Op.Src, SrcBytes) : std::nullopt;
    std::optional<OperandRef> DstRef = Reduces ? T.shared(Op.Dst, H.Count * ES) : std::nullopt;
    Staged = HasSrc && (!SrcRef || (Reduces && !DstRef));

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
      uint64_t *C = T.countsOf(T.Index, S0);
      std::copy(Op.SendCounts.begin(), Op.SendCounts.end(), C);
      std::copy(Op.RecvCounts.begin(), Op.RecvCounts.end(), C + N);
    }
    if (Staged)
      stageIn(Op, T.staging(T.Index, S0), 0, std::min(PerRound, P.Count), SendTotal, N);
    T.publish(S0, P, nullptr, 0, /*Wake=*/true);
    if (Error E = T.waitAll(Counter::Arrived, S0, W, [&] { return T.opName(Op, S0); }))
      return E;
    bool Agreed = false;
    if (Error E = T.copyPosts(Op, S0, Posts, Agreed))
      return Agreed ? T.finishRefused(std::move(E), S0, Op, W) : T.breakWith(std::move(E));

    AnyStaged = any_of(Posts, [](const PostCopy &C) { return C.P.Flags & PostFlags::Staged; });
    Length = H.Count;
    if (V)
      for (const PostCopy &C : Posts)
        Length = std::max(Length, C.P.Count);
    Rounds = AnyStaged ? std::max<uint64_t>(1, divideCeil(Length, PerRound)) : 1;
    return Error::success();
  }

  /// Where the peers' referenced operands are, checked once for the whole
  /// collective: every round's slice lies within.
  Error findPeerOperands() {
    SrcBase.assign(N, nullptr);
    DstBase.assign(N, nullptr);
    SendCounts.assign(N, nullptr);
    for (uint32_t Q = 0; Q != N; ++Q) {
      const SharedPost &QP = Posts[Q].P;
      bool QStaged = QP.Flags & PostFlags::Staged;
      if (V)
        SendCounts[Q] = Posts[Q].Counts.data();
      if (bringsSource(H, Q) && !QStaged) {
        Optional<uint64_t> Need =
            V ? checkedMulUnsigned<uint64_t>(QP.Count, ES) : Optional<uint64_t>(SrcBytes);
        if (!Need)
          return T.breakWith(makeError(ErrorKind::Backend,
                                       formatv("all_to_all_v in group '{0}': {1} would send {2} "
                                               "elements of {3} bytes (a corrupt peer)",
                                               T.Group, T.memberName(Q), QP.Count, ES),
                                       T.Members[Q].GroupRank));
        // A source of this member's own is where it is (no lookup needed);
        // a broadcast's non-root sources carry nothing.
        Expected<char *> At = T.resolve(Q, QP.Src, *Need, "source", Op);
        if (!At)
          return T.breakWith(At.takeError());
        SrcBase[Q] = *At;
      }
      if (Reduces && !QStaged) {
        Expected<char *> At = T.resolve(Q, QP.Dst, H.Count * ES, "destination", Op);
        if (!At)
          return T.breakWith(At.takeError());
        DstBase[Q] = *At;
      }
    }
    return Error::success();
  }

  Error rounds(AcrossHosts Across) {
    for (uint64_t K = 0; K != Rounds; ++K)
      if (Error E = round(K, Across))
        return E;
    return Error::success();
  }

private:
  /// Round \p K: the window [A, B) of every operand.
  Error round(uint64_t K, AcrossHosts Across) {
    uint64_t A = AnyStaged ? K * PerRound : 0;
    uint64_t B = AnyStaged ? std::min(Length, A + PerRound) : Length;
    if (K) {
      S = ++T.Seq;
      if (Staged)
        stageIn(Op, T.staging(T.Index, S), A, B, SendTotal, N);
      if (Error E = T.arriveRound(S, Op, W))
        return E;
    }
    Srcs.assign(N, nullptr);
    Dsts.assign(N, nullptr);
    Strides.assign(N, H.Count);
    for (uint32_t Q = 0; Q != N; ++Q) {
      bool QStaged = Posts[Q].P.Flags & PostFlags::Staged;
      if (QStaged)
        Strides[Q] = B - A;
      if (bringsSource(H, Q))
        Srcs[Q] = QStaged ? T.staging(Q, S) : SrcBase[Q] + A * ES;
      if (Reduces)
        Dsts[Q] = QStaged ? T.staging(Q, S) : DstBase[Q] + A * ES;
    }
    if (!Reduces)
      Dsts[T.Index] = Op.Dst + (V ? 0 : A * ES);
    if (Across)
      return roundAcrossHosts(A, B, Across);
    ShareView View;
    View.Head = H;
    View.Head.Count = V ? 0 : B - A;
    View.Ranks = int(N);
    View.Rank = int(T.Index);
    View.Srcs = Srcs.data();
    View.Dsts = Dsts.data();
    View.SrcStrides = Strides.data();
    View.DstStride = H.Count;
    View.SendCounts = SendCounts.data();
    View.RecvCounts = Op.RecvCounts.data();
    View.WindowBegin = A;
    View.WindowEnd = B;
    runShare(View, /*Whole=*/false);
    if (Error E = T.complete(S, Op, W))
      return E;
    if (Reduces && Staged)
      copyBytes(Op.Dst + A * ES, T.staging(T.Index, S), (B - A) * ES, false);
    return Error::success();
  }

  /// Across hosts: this member's chunk of the host's reduction, where its
  /// peers can read it (its staging or its shared result); the engine
  /// completes it across hosts; every member gathers every chunk.
  Error roundAcrossHosts(uint64_t A, uint64_t B, AcrossHosts Across) {
    auto [C0, C1] = allReduceChunk(B - A, ES, int(T.Index), int(N));
    char *Home = Dsts[T.Index];
    if (accumulatesWider(H.Elem)) {
      // Rounded once, after the hosts' partials are added (the
      // reference's arithmetic): a partial rounded to f16 may overflow.
      T.Widened.resize(C1 - C0);
      reduceWidened(H.Elem, H.Op, H.Scale, Srcs.data(), N, C0, T.Widened.data(), C1 - C0);
      if (C1 > C0)
        if (Error E = Across(reinterpret_cast<char *>(T.Widened.data()), ElemType::F32, C1 - C0))
          return T.breakWith(std::move(E));
      narrowFrom(H.Elem, T.Widened.data(), Home + C0 * ES, C1 - C0);
    } else {
      reduceInto(H.Elem, H.Op, H.Scale, Srcs.data(), N, C0, &Home, 1, C0, C1 - C0, false);
      if (C1 > C0)
        if (Error E = Across(Home + C0 * ES, H.Elem, C1 - C0))
          return T.breakWith(std::move(E));
    }
    if (Error E = T.complete(S, Op, W))
      return E;
    char *Out = Op.Dst + A * ES;
    for (uint32_t Q = 0; Q != N; ++Q) {
      auto [Q0, Q1] = allReduceChunk(B - A, ES, int(Q), int(N));
      copyBytes(Out + Q0 * ES, Dsts[Q] + Q0 * ES, (Q1 - Q0) * ES, false);
    }
    // Nobody reads a chunk any more once everyone is here.
    S = ++T.Seq;
    return T.arriveRound(S, Op, W);
  }

  ShmTeam &T;
  const TeamOp &Op;
  const OpHeader &H;
  const uint64_t S0;
  const WaitPolicy &W;
  const uint32_t N;
  const unsigned ES;
  const bool V, Reduces; ///< an all_to_all_v; an all_reduce
  uint64_t SendTotal = 0, PerRound = 0, SrcBytes = 0;
  bool Staged = false;    ///< this member's operands go through its staging
  SmallVector<PostCopy, 8> Posts;
  bool AnyStaged = false; ///< some member's do: rounds of the staging size
  uint64_t Length = 0, Rounds = 1;
  SmallVector<char *, 8> SrcBase, DstBase;
  SmallVector<const uint64_t *, 8> SendCounts;
  uint64_t S = S0; ///< the sequence number of the round now
  SmallVector<const char *, 8> Srcs;
  SmallVector<char *, 8> Dsts;
  SmallVector<uint64_t, 8> Strides;
};

Error ShmTeam::runLarge(const TeamOp &Op, uint64_t S0, const WaitPolicy &W, AcrossHosts Across) {
  LargeRun Run(*this, Op, S0, W);
  if (Error E = Run.post())
    return E;
  if (Error E = Run.findPeerOperands())
    return E;
  return Run.rounds(Across);
}

} // namespace collc::rt::shm
