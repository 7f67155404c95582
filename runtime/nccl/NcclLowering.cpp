//===- runtime/nccl/NcclLowering.cpp - A plan as one rank's CUDA/NCCL calls ===//

#include "runtime/nccl/NcclLowering.h"

#include "runtime/exec/StepWalk.h"
#include "runtime/nccl/IssueOrder.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <set>

using namespace llvm;

namespace collc::rt::nccl {

StringRef ncclTypeName(ElemType T) {
  switch (T) {
#define COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                        \
  case ElemType::Enum:                                                                             \
    return #Nccl;
#include "ir/ElemTypes.def"
  }
  return "?";
}

StringRef ncclOpName(ReduceOp Op) {
  switch (Op) {
#define COLLC_PLAIN_REDUCE(Enum, Spelling, Combine, Mpi, Nccl)                                     \
  case ReduceOp::Enum:                                                                             \
    return #Nccl;
#define COLLC_SCALED_REDUCE(Enum, Spelling, Combine, Mpi)                                          \
  case ReduceOp::Enum:                                                                             \
    return Spelling;
#include "ir/ReduceOps.def"
  }
  return "?";
}

namespace {

class Lowerer {
public:
  Lowerer(const plan::Plan &P, int64_t Rank) : P(P), Rank(Rank) { L.Rank = Rank; }

  Expected<NcclRankPlan> run() {
    if (Rank < 0 || Rank >= P.World)
      return makeError(ErrorKind::InvalidArgument,
                       formatv("rank {0} is not in 0..{1} of plan @{2}", Rank, P.World - 1,
                               P.Program));
    setup();
    // The plan's steps as the comm stream issues them (IssueOrder.h).
    std::vector<Issue> Order = issueOrder(P, Rank);
    for (size_t Pos = 0; Pos != Order.size(); ++Pos) {
      Issue &I = Order[Pos];
      switch (I.K) {
      case Issue::Launch:
        // A fenced comm waits for the computes before its launch step, not
        // for those its group was held open across (docs/plan.md).
        for (size_t J = 0; J != I.Comms.size(); ++J)
          if (P.Comms[I.Comms[J]].Fenced)
            FenceOf[I.Comms[J]] = computesBefore(I.LaunchedAfter[J]);
        launchGroup(I);
        break;
      case Issue::Eager:
        runtimeAllToAllV(I.Index);
        break;
      case Issue::Wait:
        waitStep(I.Index);
        break;
      case Issue::Compute:
        ComputesOn[P.Computes[I.Index].Stream].push_back({Pos, int64_t(I.Index)});
        break;
      }
    }
    closeGraph();
    warmUp();
    L.ReadyEvents = unsigned(ReadyEvents.size());
    return std::move(L);
  }

private:
  // --- setup --------------------------------------------------------------

  void setup() {
    L.Setup.push_back({CallKind::SetDevice});
    L.Setup.push_back({CallKind::CreateStream});
    // One communicator is initialized from a unique id, the world's, and
    // non-blocking (its init is bounded); every communicator that carries
    // traffic is split from it (ncclCommSplit, sharing its resources:
    // no bootstrap, topology search or proxy of its own) and blocking (a
    // non-blocking group end starts a thread). Splits are collective over
    // the world, so every rank splits every plan group, in the plan's group
    // order: into its subgroup, or into none. The world's traffic
    // communicator is always there: the digest handshake runs over it.
    L.Root = {"world", "the world, initialized to be split", P.World, Rank};
    L.Setup.push_back({CallKind::CommInit});
    WorldComm = int32_t(L.Comms.size());
    L.Comms.push_back({"world", formatv("the world: ranks 0-{0}", P.World - 1).str(), P.World,
                       Rank, /*Color=*/0});
    split(-1, WorldComm);
    GroupComm.assign(P.Groups.size(), -1);
    for (size_t G = 0; G != P.Groups.size(); ++G) {
      const plan::Group &Grp = P.Groups[G];
      int32_t Sub = Grp.SubgroupOf[Rank];
      if (Sub < 0) {
        split(int32_t(G), -1);
        continue;
      }
      const std::vector<int32_t> &Members = Grp.Subgroups[Sub];
      GroupComm[G] = int32_t(L.Comms.size());
      plan::RankSet RS;
      RS.All = false;
      RS.Ranks = Members;
      std::sort(RS.Ranks.begin(), RS.Ranks.end());
      L.Comms.push_back({formatv("@{0}/{1}", Grp.Name, Sub).str(),
                         formatv("@{0} subgroup {1}: ranks {2}", Grp.Name, Sub, RS.str()).str(),
                         int64_t(Members.size()), Grp.LocalRank[Rank], Sub});
      split(int32_t(G), GroupComm[G]);
    }
    // premul_sum ops, buffers and events this rank's comms use.
    std::set<int32_t> UsedBuffers;
    for (const plan::Comm &C : P.Comms) {
      const plan::CommSide *Side = C.sideOn(Rank);
      if (!Side)
        continue;
      if (Side->InBuffer >= 0)
        UsedBuffers.insert(Side->InBuffer);
      if (Side->OutBuffer >= 0)
        UsedBuffers.insert(Side->OutBuffer);
      bool Reduces = plan::hasReduceOp(C.Kind);
      if (Reduces && C.Reduce == ReduceOp::PremulSum)
        preMulSum(commOf(C), C.Elem, C.Scale);
      if (C.Kind == plan::CommKind::Barrier)
        NeedScratch = true;
      if (C.Kind == plan::CommKind::AllToAllV && Side->Counts >= 0) {
        int64_t N = P.groupSize(C, Rank);
        CountsBytes = std::max<uint64_t>(CountsBytes, uint64_t(N * N) * 8);
      }
    }
    for (int32_t B : UsedBuffers) {
      Call M{CallKind::Malloc};
      M.Buffer = B;
      M.Bytes = P.Buffers[B].Bytes;
      L.Setup.push_back(M);
    }
    if (NeedScratch) {
      Call M{CallKind::Malloc};
      M.Buffer = scratchBuffer();
      M.Bytes = 4;
      M.Note = "scratch: NCCL has no barrier, an all_reduce of one int32 stands in";
      L.Setup.push_back(M);
    }
    if (CountsBytes) {
      Call M{CallKind::Malloc};
      M.Buffer = countsBuffer();
      M.Bytes = CountsBytes;
      M.Note = "every rank's split sizes of a runtime all_to_all_v (and a pinned host copy)";
      L.Setup.push_back(M);
    }
    // Every tensor's home, once: a view slot of a one-segment buffer, else
    // the tensor itself.
    std::vector<Ref> &Homes = L.Homes;
    Homes.resize(P.Tensors.size());
    for (size_t T = 0; T != P.Tensors.size(); ++T)
      Homes[T] = {-1, int32_t(T), 0};
    for (size_t B = 0; B != P.Buffers.size(); ++B)
      if (P.Buffers[B].Segments == 1)
        for (const plan::Slot &S : P.Buffers[B].Slots)
          if (S.Mode == plan::SlotMode::View && Homes[S.Tensor].Buffer < 0)
            Homes[S.Tensor] = {int32_t(B), -1, S.Offset};
    // Which compute makes each tensor on this rank, and when.
    Producer.assign(P.Tensors.size(), -1);
    ComputeStep.assign(P.Computes.size(), 0);
    for (size_t S : stepsOfRank(P, Rank)) {
      const plan::Step &St = P.Steps[S];
      if (St.Kind != plan::StepKind::Compute)
        continue;
      ComputeStep[St.Index] = S;
      for (uint32_t T : P.Computes[St.Index].Outputs)
        Producer[T] = int64_t(St.Index);
    }
    for (const plan::Comm &C : P.Comms)
      L.DoneEvents += C.issuedOn(Rank);
    // CreateEvents is completed (its count) once the waits are known.
    L.Setup.push_back({CallKind::CreateEvents});
  }

  /// The split of plan group \p Group (-1: the world's traffic) into
  /// communicator \p Comm of L.Comms (-1: none, this rank is in no
  /// subgroup of it).
  void split(int32_t Group, int32_t Comm) {
    Call C{CallKind::CommSplit};
    C.Comm = Comm;
    C.SplitGroup = Group;
    L.Setup.push_back(C);
  }

  int32_t scratchBuffer() const { return int32_t(P.Buffers.size()); }
  int32_t countsBuffer() const { return int32_t(P.Buffers.size()) + 1; }

  /// What this rank issues comm \p K with (a joint comm's side).
  const plan::CommSide &sideOf(uint32_t K) const { return *P.Comms[K].sideOn(Rank); }

  int32_t commOf(const plan::Comm &C) const {
    return C.Group >= 0 ? GroupComm[C.Group] : WorldComm;
  }

  int32_t preMulSum(int32_t Comm, ElemType T, double Scale) {
    for (size_t K = 0; K != L.PreMulSums.size(); ++K) {
      const PreMulSumDesc &D = L.PreMulSums[K];
      if (D.Comm == Comm && D.Elem == T && D.Scale == Scale)
        return int32_t(K);
    }
    L.PreMulSums.push_back({Comm, T, Scale});
    Call C{CallKind::CreatePreMulSum};
    C.Comm = Comm;
    C.Elem = T;
    C.PreMulSum = int32_t(L.PreMulSums.size() - 1);
    L.Setup.push_back(C);
    return C.PreMulSum;
  }

  // --- capture ------------------------------------------------------------

  void emit(Call C) {
    if (!GraphOpen) {
      Call B{CallKind::BeginCapture};
      B.Graph = int32_t(L.Graphs);
      L.Capture.push_back(B);
      GraphOpen = true;
    }
    C.Graph = int32_t(L.Graphs);
    L.Capture.push_back(std::move(C));
  }

  void closeGraph() {
    if (!GraphOpen)
      return;
    Call E{CallKind::EndCapture};
    E.Graph = int32_t(L.Graphs);
    L.Capture.push_back(E);
    Call I{CallKind::Instantiate};
    I.Graph = int32_t(L.Graphs);
    L.Capture.push_back(I);
    Call G{CallKind::GraphLaunch};
    G.Graph = int32_t(L.Graphs);
    L.Step.push_back(G);
    ++L.Graphs;
    GraphOpen = false;
  }

  /// Where tensor \p T lives: its view slot, or its own (bound) memory.
  Ref home(uint32_t T) const { return L.Homes[T]; }

  uint64_t bytes(uint32_t T) const { return uint64_t(P.Tensors[T].Type.bytes()); }

  /// The copies of a pack (into \p Buffer) or an unpack (out of it).
  std::vector<CopySegment> copies(int32_t Buffer, plan::SlotMode Mode) const {
    std::vector<CopySegment> Out;
    const plan::Buffer &B = P.Buffers[Buffer];
    uint64_t Segment = B.Bytes / uint64_t(B.Segments);
    for (const plan::Slot &S : B.Slots) {
      if (S.Mode != Mode)
        continue;
      uint64_t Chunk = S.Bytes / uint64_t(B.Segments);
      for (int64_t Sg = 0; Sg != B.Segments; ++Sg) {
        Ref InBuf{Buffer, -1, uint64_t(Sg) * Segment + S.Offset};
        Ref Tensor = home(S.Tensor);
        Tensor.Offset += uint64_t(Sg) * Chunk;
        if (Mode == plan::SlotMode::Pack)
          Out.push_back({InBuf, Tensor, Chunk});
        else
          Out.push_back({Tensor, InBuf, Chunk});
      }
    }
    return Out;
  }

  /// Waits until the model has made the tensors \p Ts: on the latest of
  /// their producers per model stream, unless an earlier wait covers it.
  /// (A tensor an earlier comm made is ordered on the comm stream already.)
  /// A fenced comm also waits for every compute before its launch.
  void waitReady(ArrayRef<uint32_t> Ts, uint32_t PlanComm, std::vector<Call> *Into) {
    std::map<uint32_t, int64_t> LatestPerStream; // model stream -> compute
    auto Note = [&](int64_t C) {
      uint32_t Stream = P.Computes[C].Stream;
      auto [It, New] = LatestPerStream.insert({Stream, C});
      if (!New && ComputeStep[C] > ComputeStep[It->second])
        It->second = C;
    };
    for (uint32_t T : Ts)
      if (Producer[T] >= 0)
        Note(Producer[T]);
    if (auto Fence = FenceOf.find(PlanComm); Fence != FenceOf.end())
      for (auto [Stream, C] : Fence->second)
        Note(C);
    for (auto [Stream, C] : LatestPerStream) {
      auto Seen = WaitedUpTo.find(Stream);
      if (Seen != WaitedUpTo.end() && ComputeStep[Seen->second] >= ComputeStep[C])
        continue;
      WaitedUpTo[Stream] = C;
      ReadyEvents.insert(uint32_t(C));
      Call W{CallKind::WaitReady};
      W.Compute = uint32_t(C);
      W.PlanComm = PlanComm;
      if (Into)
        Into->push_back(W);
      else
        emit(W);
    }
  }

  /// A group of the issue order: its comms' ready waits and packs, then
  /// their NCCL calls, as one NCCL group when more than one (NCCL fuses
  /// collectives; sends and recvs in one group progress together).
  void launchGroup(const Issue &I) {
    std::vector<Call> Nccl;
    for (uint32_t K : I.Comms) {
      const plan::CommSide &Side = sideOf(K);
      waitReady(Side.Inputs, K, nullptr);
      if (Side.InBuffer >= 0) {
        std::vector<CopySegment> Packs = copies(Side.InBuffer, plan::SlotMode::Pack);
        if (!Packs.empty()) {
          Call Pk{CallKind::Pack};
          Pk.Buffer = Side.InBuffer;
          Pk.Copies = std::move(Packs);
          Pk.PlanComm = K;
          emit(std::move(Pk));
        }
      }
      ncclCalls(K, Nccl);
    }
    bool Group = Nccl.size() > 1;
    // Held open past computes or waits: say so where it is issued.
    std::string Held;
    if (I.HeldAcross) {
      Held = I.FirstHeldCompute >= 0 ? "held open from before @" +
                                           P.Computes[I.FirstHeldCompute].Name
                                     : std::string("held open across a wait");
      if (I.IssuedBy == Issue::AtWait)
        Held += formatv(" to the wait for #{0}", I.Until).str();
      else if (I.IssuedBy == Issue::BeforeCollective)
        Held += formatv(" to collective #{0}", I.Until).str();
      else if (I.IssuedBy == Issue::AtCommChange)
        Held += formatv(" to #{0}, on another communicator", I.Until).str();
      else
        Held += " to the end of the step";
    }
    // A group never spans two communicators (IssueOrder.h): say where that
    // ended one.
    std::string Split;
    if (!I.HeldAcross && I.IssuedBy == Issue::AtCommChange)
      Split = formatv("ends here: #{0} is on another communicator", I.Until).str();
    if (Group) {
      Call Start{CallKind::GroupStart};
      Start.Note = Held;
      emit(std::move(Start));
    } else if (!Held.empty() && !Nccl.empty()) {
      Nccl.front().Note = Held;
    }
    if (!Group && !Split.empty() && !Nccl.empty())
      Nccl.back().Note += (Nccl.back().Note.empty() ? "" : "; ") + Split;
    for (Call &C : Nccl)
      emit(std::move(C));
    if (Group) {
      Call End{CallKind::GroupEnd};
      End.Note = Split;
      emit(std::move(End));
    }
  }

  /// The NCCL calls of plan comm \p K on this rank.
  void ncclCalls(uint32_t K, std::vector<Call> &Out) {
    const plan::Comm &C = P.Comms[K];
    const plan::CommSide &Side = sideOf(K);
    unsigned ES = elemTypeBytes(C.Elem);
    int64_t N = P.groupSize(C, Rank);
    bool Fused = Side.InBuffer >= 0;
    Ref In = Fused ? Ref{Side.InBuffer, -1, 0}
                   : (Side.Inputs.empty() ? Ref{} : home(Side.Inputs[0]));
    Ref OutR = Side.OutBuffer >= 0 ? Ref{Side.OutBuffer, -1, 0}
                                   : (Side.Outputs.empty() ? Ref{} : home(Side.Outputs[0]));
    uint64_t InBytes = Fused ? P.Buffers[Side.InBuffer].Bytes
                             : (Side.Inputs.empty() ? 0 : bytes(Side.Inputs[0]));
    uint64_t OutBytes = Side.OutBuffer >= 0 ? P.Buffers[Side.OutBuffer].Bytes
                                            : (Side.Outputs.empty() ? 0 : bytes(Side.Outputs[0]));
    Call X;
    X.Comm = commOf(C);
    X.SendBuf = In;
    X.RecvBuf = OutR;
    X.Elem = C.Elem;
    X.Op = C.Reduce;
    X.PlanComm = K;
    bool Reduces = plan::hasReduceOp(C.Kind);
    if (Reduces && C.Reduce == ReduceOp::PremulSum)
      X.PreMulSum = preMulSum(X.Comm, C.Elem, C.Scale);
    switch (C.Kind) {
    case plan::CommKind::AllReduce:
      X.Kind = CallKind::AllReduce;
      X.Count = InBytes / ES;
      Out.push_back(X);
      return;
    case plan::CommKind::ReduceScatter:
      X.Kind = CallKind::ReduceScatter;
      X.Count = OutBytes / ES;
      Out.push_back(X);
      return;
    case plan::CommKind::AllGather:
      X.Kind = CallKind::AllGather;
      X.Count = InBytes / ES;
      Out.push_back(X);
      return;
    case plan::CommKind::AllToAll:
      X.Kind = CallKind::AllToAll;
      X.Count = InBytes / ES / uint64_t(std::max<int64_t>(1, N));
      Out.push_back(X);
      return;
    case plan::CommKind::Broadcast:
      X.Kind = CallKind::Broadcast;
      X.Count = InBytes / ES;
      X.Peer = C.Peers[Rank];
      Out.push_back(X);
      return;
    case plan::CommKind::Send:
    case plan::CommKind::Recv: {
      bool IsSend = C.Kind == plan::CommKind::Send;
      uint32_t T = IsSend ? Side.Inputs[0] : Side.Outputs[0];
      X.Kind = IsSend ? CallKind::Send : CallKind::Recv;
      X.SendBuf = IsSend ? home(T) : Ref{};
      X.RecvBuf = IsSend ? Ref{} : home(T);
      X.Count = bytes(T) / ES;
      X.Peer = C.Peers[Rank];
      if (C.Group >= 0)
        X.Peer = P.Groups[C.Group].LocalRank[X.Peer];
      Out.push_back(X);
      return;
    }
    case plan::CommKind::Barrier:
      X.Kind = CallKind::AllReduce;
      X.SendBuf = X.RecvBuf = Ref{scratchBuffer(), -1, 0};
      X.Count = 1;
      X.Elem = ElemType::I32;
      X.Op = ReduceOp::Sum;
      X.Note = "barrier";
      Out.push_back(X);
      return;
    case plan::CommKind::AllToAllV:
      staticAllToAllV(K, X, N, Out);
      return;
    }
  }

  /// Rows of dimension 0 to and from every peer, known now: one grouped
  /// send and receive per peer and tensor (none of zero rows: both sides
  /// know it is zero).
  void staticAllToAllV(uint32_t K, const Call &Base, int64_t N, std::vector<Call> &Out) {
    const plan::Comm &C = P.Comms[K];
    const plan::CommSide &Side = sideOf(K);
    int64_t Local = P.Groups[C.Group].LocalRank[Rank];
    for (size_t Part = 0; Part != Side.Inputs.size(); ++Part) {
      uint32_t In = Side.Inputs[Part], OutT = Side.Outputs[Part];
      int64_t Rows = std::max<int64_t>(1, P.Tensors[In].Type.Shape[0]);
      uint64_t RowElems = uint64_t(P.Tensors[In].Type.numElements()) / uint64_t(Rows);
      uint64_t RowBytes = RowElems * elemTypeBytes(C.Elem);
      uint64_t SendAt = 0, RecvAt = 0;
      for (int64_t J = 0; J != N; ++J) {
        uint64_t SendRows = uint64_t(C.Splits[Local * N + J]);
        uint64_t RecvRows = uint64_t(C.Splits[J * N + Local]);
        if (SendRows) {
          Call S = Base;
          S.Kind = CallKind::Send;
          S.SendBuf = home(In);
          S.SendBuf.Offset += SendAt * RowBytes;
          S.RecvBuf = Ref{};
          S.Count = SendRows * RowElems;
          S.Peer = J;
          Out.push_back(S);
        }
        if (RecvRows) {
          Call R = Base;
          R.Kind = CallKind::Recv;
          R.SendBuf = Ref{};
          R.RecvBuf = home(OutT);
          R.RecvBuf.Offset += RecvAt * RowBytes;
          R.Count = RecvRows * RowElems;
          R.Peer = J;
          Out.push_back(R);
        }
        SendAt += SendRows;
        RecvAt += RecvRows;
      }
    }
  }

  /// Split sizes known only at run time: the graph ends here; each step
  /// exchanges the counts, reads them back, and issues the grouped sends and
  /// receives eagerly (counts 0 in the listing: read at run time).
  void runtimeAllToAllV(uint32_t K) {
    closeGraph();
    const plan::Comm &C = P.Comms[K];
    const plan::CommSide &Side = sideOf(K);
    int32_t Comm = commOf(C);
    int64_t N = P.groupSize(C, Rank);
    std::vector<uint32_t> Needs(Side.Inputs.begin(), Side.Inputs.end());
    Needs.push_back(uint32_t(Side.Counts));
    // Eager: the wait is issued every step, so it does not count as covering
    // later captured waits (WaitedUpTo is reset: a new graph begins).
    WaitedUpTo.clear();
    waitReady(Needs, K, &L.Step);
    WaitedUpTo.clear();
    Call X{CallKind::CountsToHost};
    X.Comm = Comm;
    X.Tensor = uint32_t(Side.Counts);
    X.Count = uint64_t(N);
    X.PlanComm = K;
    L.Step.push_back(X);
    L.Step.push_back({CallKind::GroupStart});
    for (size_t Part = 0; Part != Side.Inputs.size(); ++Part)
      for (int64_t J = 0; J != N; ++J)
        for (CallKind Kind : {CallKind::Send, CallKind::Recv}) {
          Call S;
          S.Kind = Kind;
          S.Comm = Comm;
          S.Elem = C.Elem;
          S.Peer = J;
          S.PlanComm = K;
          uint32_t T = Kind == CallKind::Send ? Side.Inputs[Part] : Side.Outputs[Part];
          (Kind == CallKind::Send ? S.SendBuf : S.RecvBuf) = home(T);
          S.CountAtRunTime = true;
          // From the plan's tensor: the home of a view names a buffer only.
          const TensorType &Type = P.Tensors[T].Type;
          int64_t Rows = Type.Shape.empty() ? 1 : std::max<int64_t>(1, Type.Shape[0]);
          S.RowElems = uint64_t(Type.numElements()) / uint64_t(Rows);
          S.Note = formatv("n: rows of {0} elements, from the exchanged counts", S.RowElems);
          L.Step.push_back(S);
        }
    L.Step.push_back({CallKind::GroupEnd});
    Call D{CallKind::RecordDone};
    D.PlanComm = K;
    L.Step.push_back(D);
    RuntimeDone.insert(K);
  }

  void waitStep(uint32_t K) {
    const plan::CommSide &Side = sideOf(K);
    // Recorded where it ran (runtime all_to_all_v), or at an earlier wait
    // on another result of the same fused comm.
    if (!Waited.insert(K).second || RuntimeDone.count(K))
      return;
    if (Side.OutBuffer >= 0) {
      std::vector<CopySegment> Unpacks = copies(Side.OutBuffer, plan::SlotMode::Unpack);
      if (!Unpacks.empty()) {
        Call U{CallKind::Unpack};
        U.Buffer = Side.OutBuffer;
        U.Copies = std::move(Unpacks);
        U.PlanComm = K;
        emit(std::move(U));
      }
    }
    Call D{CallKind::RecordDone};
    D.PlanComm = K;
    emit(D);
  }

  /// The warm-up is the captured work run once eagerly, so that every
  /// (communicator, op, peer) connects before capture, in the group
  /// structure it will have; then the stream is synchronized.
  void warmUp() {
    for (const Call &C : L.Capture)
      if (C.Kind != CallKind::BeginCapture && C.Kind != CallKind::EndCapture &&
          C.Kind != CallKind::Instantiate && C.Kind != CallKind::WaitReady &&
          C.Kind != CallKind::RecordDone)
        L.WarmUp.push_back(C);
    L.WarmUp.push_back({CallKind::StreamSync});
  }

  const plan::Plan &P;
  int64_t Rank;
  NcclRankPlan L;
  int32_t WorldComm = -1;
  std::vector<int32_t> GroupComm;
  std::vector<int64_t> Producer;   ///< tensor -> compute on this rank, or -1
  std::vector<size_t> ComputeStep; ///< compute -> its step
  /// Model stream -> its computes so far, each with its position in the
  /// issue order (increasing).
  std::map<uint32_t, std::vector<std::pair<size_t, int64_t>>> ComputesOn;
  /// Per model stream, its latest compute among the first \p N entries of
  /// the issue order.
  std::map<uint32_t, int64_t> computesBefore(size_t N) const {
    std::map<uint32_t, int64_t> Latest;
    for (const auto &[Stream, Cs] : ComputesOn) {
      auto It = llvm::partition_point(Cs, [&](const auto &X) { return X.first < N; });
      if (It != Cs.begin())
        Latest[Stream] = std::prev(It)->second;
    }
    return Latest;
  }
  /// Fenced comm -> the latest compute per stream before its launch.
  std::map<uint32_t, std::map<uint32_t, int64_t>> FenceOf;
  std::map<uint32_t, int64_t> WaitedUpTo; ///< model stream -> latest compute waited on
  std::set<uint32_t> ReadyEvents;
  std::set<uint32_t> RuntimeDone, Waited;
  bool GraphOpen = false;
  bool NeedScratch = false;
  uint64_t CountsBytes = 0;
};

} // namespace

RuntimeSlice runtimeSlice(const Call &C, ArrayRef<uint64_t> Rows) {
  uint64_t Before = 0;
  for (int64_t J = 0; J != C.Peer; ++J)
    Before += Rows[J];
  return {Before * C.RowElems * elemTypeBytes(C.Elem), Rows[C.Peer] * C.RowElems};
}

Expected<NcclRankPlan> lowerForRank(const plan::Plan &P, int64_t Rank) {
  return Lowerer(P, Rank).run();
}

} // namespace collc::rt::nccl
