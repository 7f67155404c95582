//===- compiler/Lowering.cpp - Program to plan -----------------------------===//

#include "compiler/Lowering.h"

#include "plan/analysis/CommKind.h"
#include "plan/PlanValidator.h"
#include "ir/RankMasks.h"
#include "passes/analysis/BufferLayout.h"
#include "llvm/Support/SourceMgr.h"

#include <map>

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

/// The ranks in both sets.
static plan::RankSet intersect(const plan::RankSet &A, const plan::RankSet &B) {
  if (A.All)
    return B;
  if (B.All)
    return A;
  plan::RankSet S;
  S.All = false;
  std::set_intersection(A.Ranks.begin(), A.Ranks.end(), B.Ranks.begin(), B.Ranks.end(),
                        std::back_inserter(S.Ranks));
  return S;
}

static plan::RankSet rankSet(const RankMasks &M, OpId I, int64_t World) {
  plan::RankSet S;
  const BitVector *Mask = M.mask(I);
  if (!Mask)
    return S;
  S.All = false;
  for (int64_t R = 0; R != World; ++R)
    if (Mask->test(R))
      S.Ranks.push_back(R);
  return S;
}

namespace {

/// One lowering: the plan built step by step, in the order the steps
/// depend on each other (the layout, the limits, the groups, the tensors,
/// the buffers, then one op at a time in program order).
class PlanLowering {
public:
  PlanLowering(const Program &P, const LoweringOptions &Opts)
      : P(P), Opts(Opts), Ops(P.ops()), Masks(P), CommOfValue(P.numValues(), -1) {}

  Expected<plan::Plan> run() {
    chooseLayout();
    findSource();
    if (Error E = checkFormatLimits())
      return E;
    if (Error E = lowerGroups())
      return E;
    numberTensors();
    lowerBuffers();
    Out.Steps.reserve(Ops.size() * 2);
    Out.Computes.reserve(Ops.size());
    Out.Comms.reserve(Ops.size());
    for (OpId I = 0; I != Ops.size(); ++I)
      if (Error E = lowerOp(I))
        return E;
    return finish();
  }

private:
  /// plan-memory's layout, or, where none holds, one laid out here and said
  /// so in the plan.
  void chooseLayout() {
    Out.Program = P.name().str();
    Out.World = P.worldSize();
    if (!Opts.MemoryPlan)
      Default = computeBufferLayout(P, Opts.Layout);
    Mem = Opts.MemoryPlan ? Opts.MemoryPlan : &*Default;
    Out.Alignment = Mem->Alignment;
    Out.Notes = Opts.Notes;
    if (Default && !Mem->Buffers.empty())
      Out.Notes.push_back(formatv("layout: no plan-memory ran after the pipeline's last change: "
                                  "buffers laid out by default (align {0}, views {1})",
                                  Opts.Layout.Alignment, Opts.Layout.AllowViews ? "true" : "false")
                              .str());
  }

  /// Locations are written as line:col; the file is named once.
  void findSource() {
    SM = P.sourceMgr();
    if (SM)
      for (const Op &O : Ops)
        if (O.Loc.isValid() && (Buffer = SM->FindBufferContainingLoc(O.Loc)))
          break;
    if (Buffer)
      Out.Source = SM->getMemoryBuffer(Buffer)->getBufferIdentifier().str();
  }

  std::string loc(SMLoc L) const {
    if (!Buffer || !L.isValid() || SM->FindBufferContainingLoc(L) != Buffer)
      return "";
    auto [Line, Col] = SM->getLineAndColumn(L, Buffer);
    return std::to_string(Line) + ":" + std::to_string(Col);
  }

  /// The format's limits, refused here rather than written into a plan
  /// that its reader would refuse.
  Error checkFormatLimits() const {
    if (Out.Alignment > uint64_t(plan::MaxAlignment))
      return createStringError(inconvertibleErrorCode(),
                               "alignment %llu is beyond the plan format's limit of %lld bytes "
                               "(plan-memory{align=N}, collc compile --align)",
                               (unsigned long long)Out.Alignment, (long long)plan::MaxAlignment);
    for (const Op &O : Ops)
      for (ValueId V : O.Results)
        for (int64_t D : P.value(V).Type.Shape)
          if (D > plan::MaxDimension)
            return createStringError(inconvertibleErrorCode(),
                                     "%s:%s: %%%s : %s has dimension %lld, beyond the plan "
                                     "format's limit of 2^48",
                                     Out.Source.c_str(), loc(O.Loc).c_str(),
                                     P.value(V).Name.str().c_str(),
                                     P.value(V).Type.str().c_str(), (long long)D);
    return Error::success();
  }

  /// The plan lists every group's members: refused before building tables
  /// for all of them when they would not fit.
  Error lowerGroups() {
    if (std::optional<GroupBudgetExcess> X = checkGroupTableBudget(P, GroupsNeeded::All))
      return createStringError(inconvertibleErrorCode(), "%s:%s: %s", Out.Source.c_str(),
                               loc(X->Loc).c_str(), X->Msg.c_str());
    for (const Group &G : P.groups()) {
      plan::Group PG;
      PG.Name = G.Name.str();
      PG.Subgroups.assign(G.subgroups().begin(), G.subgroups().end());
      Out.Groups.push_back(std::move(PG));
    }
    return Error::success();
  }

  /// Tensors are numbered in the order the (canonically ordered) program
  /// defines them, never by value id, which follows the input's text
  /// order. A send's token is no tensor: its wait names the send's comm.
  void numberTensors() {
    TensorOf.assign(P.numValues(), ~0u);
    Out.Tensors.reserve(P.numValues());
    for (const Op &O : Ops)
      for (ValueId V : O.Results) {
        if (P.value(V).IsToken)
          continue;
        TensorOf[V] = Out.Tensors.size();
        Out.Tensors.push_back({P.value(V).Name.str(), P.value(V).Type});
      }
  }

  std::vector<uint32_t> tensors(ArrayRef<ValueId> Vs) const {
    std::vector<uint32_t> T;
    T.reserve(Vs.size());
    for (ValueId V : Vs)
      if (!P.value(V).IsToken)
        T.push_back(TensorOf[V]);
    return T;
  }

  void lowerBuffers() {
    for (const LayoutBuffer &B : Mem->Buffers) {
      plan::Buffer PB;
      PB.Bytes = B.Bytes;
      PB.Segments = B.Segments;
      for (const LayoutSlot &S : B.Slots)
        PB.Slots.push_back({TensorOf[S.Value], S.Offset, S.Bytes, S.Mode});
      Out.Buffers.push_back(std::move(PB));
    }
  }

  Error lowerOp(OpId I) {
    const Op &O = Ops[I];
    if (O.Kind == OpKind::Compute) {
      lowerCompute(I);
      return Error::success();
    }
    if (O.Kind == OpKind::Wait)
      return lowerWait(I);
    if (O.isJoint())
      if (auto It = JointComm.find(O.getAttr(Op::JointAttr)->Int); It != JointComm.end())
        return lowerFurtherSide(I, It->second);
    return lowerComm(I);
  }

  void lowerCompute(OpId I) {
    const Op &O = Ops[I];
    plan::Compute C;
    C.Name = O.Callee.str();
    C.Stream = O.Stream;
    C.CostNs = O.CostNs;
    C.Ranks = rankSet(Masks, I, P.worldSize());
    C.Inputs = tensors(O.Operands);
    C.Outputs = tensors(O.Results);
    C.Loc = loc(O.Loc);
    Out.Steps.push_back({plan::StepKind::Compute, uint32_t(Out.Computes.size())});
    Out.Computes.push_back(std::move(C));
  }

  /// One wait step per comm, in the order the values are listed, on the
  /// ranks of the waited side that run this wait.
  Error lowerWait(OpId I) {
    const Op &O = Ops[I];
    SmallVector<int32_t, 4> Seen;
    plan::RankSet WaitRanks = rankSet(Masks, I, P.worldSize());
    for (ValueId V : O.Operands) {
      int32_t C = CommOfValue[V];
      if (C < 0)
        return createStringError(inconvertibleErrorCode(),
                                 "wait on %%%s, which no communication op produces",
                                 P.value(V).Name.str().c_str());
      if (llvm::is_contained(Seen, C))
        continue;
      Seen.push_back(C);
      const plan::Comm &Waited = Out.Comms[C];
      const plan::CommSide *Side = &Waited;
      for (size_t K = 0; K != Waited.numSides(); ++K)
        if (llvm::is_contained(Waited.side(K).Outputs, TensorOf[V]) ||
            (P.value(V).IsToken && K == 0))
          Side = &Waited.side(K);
      // (A comm that runs nowhere is still waited for, by no rank.)
      plan::RankSet On = intersect(WaitRanks, Side->Ranks);
      if (On.size(P.worldSize()) || !Side->Ranks.size(P.worldSize()))
        stepOn(plan::StepKind::Wait, uint32_t(C), On, Ops[P.value(V).Def].isJoint());
    }
    return Error::success();
  }

  /// A further side of a joint comm lowered before: its own ranks, tensors
  /// and steps, the comm's kind and group (check-cross-rank proved that
  /// they agree).
  Error lowerFurtherSide(OpId I, uint32_t Index) {
    const Op &O = Ops[I];
    plan::Comm &C = Out.Comms[Index];
    plan::CommSide S;
    S.Ranks = rankSet(Masks, I, P.worldSize());
    S.Inputs = tensors(O.dataOperands());
    S.Outputs = tensors(O.Results);
    S.InBuffer = Mem->PerOp[I].In;
    S.OutBuffer = Mem->PerOp[I].Out;
    if (O.HasCountsOperand)
      S.Counts = TensorOf[O.countsOperand()];
    explain(S, O);
    // Any side async makes the comm async: a blocking side's wait follows
    // its launch at once.
    C.Async |= O.Async;
    C.Fenced |= O.Fenced;
    if (O.Peer)
      if (Error E = fillPeers(C, O, S.Ranks))
        return E;
    plan::RankSet Ranks = S.Ranks;
    C.Joined.push_back(std::move(S));
    for (ValueId V : O.Results)
      CommOfValue[V] = Index;
    stepOn(plan::StepKind::Launch, Index, Ranks, true);
    if (!O.Async)
      stepOn(plan::StepKind::Wait, Index, Ranks, true);
    return Error::success();
  }

  /// A communication op (or a joint comm's first side) becomes a comm, its
  /// launch, and its wait where it blocks.
  Error lowerComm(OpId I) {
    const Op &O = Ops[I];
    Optional<plan::CommKind> K = commKindOf(O.Kind);
    assert(K && "every other op communicates");
    plan::Comm C;
    C.Kind = *K;
    C.Reduce = O.Reduce;
    C.Scale = O.Scale;
    ArrayRef<ValueId> Data =
        O.Kind == OpKind::Recv ? ArrayRef<ValueId>(O.Results) : O.dataOperands();
    C.Elem = Data.empty() ? ElemType::F32 : P.value(Data.front()).Type.Elem;
    C.Group = O.Group == InvalidId ? -1 : int32_t(O.Group);
    C.Ranks = rankSet(Masks, I, P.worldSize());
    C.Inputs = tensors(O.dataOperands());
    C.Outputs = tensors(O.Results);
    C.InBuffer = Mem->PerOp[I].In;
    C.OutBuffer = Mem->PerOp[I].Out;
    // A p2p block's ops are posted together and complete at its end.
    C.Async = O.Async || O.Batch != InvalidId;
    C.Fenced = O.Fenced;
    if (O.Batch != InvalidId) {
      if (I == 0 || Ops[I - 1].Batch != O.Batch)
        ++Batches;
      C.Batch = Batches - 1;
    }
    if (O.Peer)
      if (Error E = fillPeers(C, O, C.Ranks))
        return E;
    if (O.Kind == OpKind::AllToAllV) {
      if (O.HasCountsOperand)
        C.Counts = TensorOf[O.countsOperand()];
      else
        C.Splits = O.Splits;
    }
    if (const Attribute *B = O.getAttr("bucket"); B && !B->IsString)
      C.Bucket = B->Int;
    // Where it launches and waits, and its buffers, are in the plan itself.
    explain(C, O);
    uint32_t Index = Out.Comms.size();
    for (ValueId V : O.Results)
      CommOfValue[V] = Index;
    if (O.isJoint()) {
      // The first side of a joint comm: its steps name its ranks.
      JointComm.emplace(O.getAttr(Op::JointAttr)->Int, Index);
      plan::RankSet Ranks = C.Ranks;
      Out.Comms.push_back(std::move(C));
      stepOn(plan::StepKind::Launch, Index, Ranks, true);
      if (!O.Async)
        stepOn(plan::StepKind::Wait, Index, Ranks, true);
      return Error::success();
    }
    Out.Steps.push_back({plan::StepKind::Launch, Index});
    // A blocking op completes before the next step; a block, at its end.
    if (O.Batch != InvalidId) {
      BatchComms.push_back(Index);
      if (I + 1 == Ops.size() || Ops[I + 1].Batch != O.Batch) {
        for (uint32_t B : BatchComms)
          Out.Steps.push_back({plan::StepKind::Wait, B});
        BatchComms.clear();
      }
    } else if (!O.Async) {
      Out.Steps.push_back({plan::StepKind::Wait, Index});
    }
    Out.Comms.push_back(std::move(C));
    return Error::success();
  }

  /// A step on some ranks of its comm: a joint comm's side, or a wait that
  /// not every rank of its comm runs here. (Every step of a joint comm
  /// names its ranks, its first side's too: the comm is known to be joint
  /// from its ops, before its later sides are.)
  void stepOn(plan::StepKind Kind, uint32_t Comm, const plan::RankSet &Ranks, bool Joint) {
    plan::Step St{Kind, Comm};
    if (Joint || !(Ranks == Out.Comms[Comm].Ranks)) {
      St.Ranks = uint32_t(Out.StepRanks.size());
      Out.StepRanks.push_back(Ranks);
    }
    Out.Steps.push_back(St);
  }

  /// Where a send/recv's peers or a broadcast's roots are, per rank of \p On.
  Error fillPeers(plan::Comm &C, const Op &O, const plan::RankSet &On) const {
    if (C.Peers.empty())
      C.Peers.assign(P.worldSize(), -1);
    for (int64_t R = 0; R != P.worldSize(); ++R) {
      if (!On.contains(R))
        continue;
      Expected<int64_t> V = O.Peer->evaluate(R, P.worldSize());
      if (!V)
        return createStringError(inconvertibleErrorCode(), "%s:%s: %s on rank %lld: %s",
                                 Out.Source.c_str(), loc(O.Loc).c_str(),
                                 opKindName(O.Kind).str().c_str(), (long long)R,
                                 toString(V.takeError()).c_str());
      int64_t Peer = *V;
      // Send/recv peers become world ranks; broadcast roots stay local.
      if (O.Kind != OpKind::Broadcast && O.Group != InvalidId) {
        ArrayRef<int32_t> M = P.group(O.Group).membersOf(R);
        Peer = Peer >= 0 && Peer < int64_t(M.size()) ? M[Peer] : -1;
      }
      C.Peers[R] = Peer;
    }
    return Error::success();
  }

  /// The decisions recorded on an op, for the side it becomes.
  void explain(plan::CommSide &S, const Op &O) const {
    for (StringRef Key : {"fused_why", "bucket_why", "prefetch_why"})
      if (const Attribute *A = O.getAttr(Key); A && A->IsString)
        S.Why.push_back((Key + ": " + A->Str).str());
    S.Loc = loc(O.Loc);
  }

  Expected<plan::Plan> finish() {
    Out.finalize();
    Out.Version = plan::requiredVersion(Out);
    // What the compiler writes, its reader takes: the same checks, here.
    if (Error E = plan::validatePlan(Out, Out.Source.empty() ? "<lowered plan>" : Out.Source))
      return E;
    // Every plan carries its digest from birth: writing it, reading it
    // back and handing it to an executor see the same value.
    Out.Digest = plan::computeDigest(Out);
    return std::move(Out);
  }

  const Program &P;
  const LoweringOptions &Opts;
  const std::vector<Op> &Ops;
  RankMasks Masks;
  plan::Plan Out;
  std::optional<BufferLayout> Default;
  const BufferLayout *Mem = nullptr;
  const SourceMgr *SM = nullptr;
  unsigned Buffer = 0; ///< the source buffer locations are written from
  std::vector<uint32_t> TensorOf;
  std::vector<int32_t> CommOfValue;
  /// A joint set's ops are one comm (check-cross-rank recorded the sets):
  /// joint id -> its comm.
  std::map<int64_t, uint32_t> JointComm;
  /// p2p blocks are numbered in program order; the open block's comms,
  /// waited for at its end.
  int32_t Batches = 0;
  std::vector<uint32_t> BatchComms;
};

} // namespace

Expected<plan::Plan> lowerToPlan(const Program &P, const LoweringOptions &Opts) {
  return PlanLowering(P, Opts).run();
}

} // namespace collc
