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

Expected<plan::Plan> lowerToPlan(const Program &P, const LoweringOptions &Opts) {
  plan::Plan Out;
  Out.Program = P.name().str();
  Out.World = P.worldSize();
  // plan-memory's layout, or, where none holds, one laid out here and said
  // so in the plan.
  std::optional<BufferLayout> Default;
  if (!Opts.MemoryPlan)
    Default = computeBufferLayout(P, Opts.Layout);
  const BufferLayout &Mem = Opts.MemoryPlan ? *Opts.MemoryPlan : *Default;
  Out.Alignment = Mem.Alignment;
  Out.Notes = Opts.Notes;
  if (Default && !Mem.Buffers.empty())
    Out.Notes.push_back(formatv("layout: no plan-memory ran after the pipeline's last change: "
                                "buffers laid out by default (align {0}, views {1})",
                                Opts.Layout.Alignment, Opts.Layout.AllowViews ? "true" : "false")
                            .str());
  // Locations as line:col; the file is named once.
  const SourceMgr *SM = P.sourceMgr();
  unsigned Buffer = 0;
  if (SM)
    for (const Op &O : P.ops())
      if (O.Loc.isValid() && (Buffer = SM->FindBufferContainingLoc(O.Loc)))
        break;
  auto Loc = [&](SMLoc L) -> std::string {
    if (!Buffer || !L.isValid() || SM->FindBufferContainingLoc(L) != Buffer)
      return "";
    auto [Line, Col] = SM->getLineAndColumn(L, Buffer);
    return std::to_string(Line) + ":" + std::to_string(Col);
  };
  if (Buffer)
    Out.Source = SM->getMemoryBuffer(Buffer)->getBufferIdentifier().str();
  // The format's limits, refused here rather than written into a plan that
  // its reader would refuse.
  if (Out.Alignment > uint64_t(plan::MaxAlignment))
    return createStringError(inconvertibleErrorCode(),
                             "alignment %llu is beyond the plan format's limit of %lld bytes "
                             "(plan-memory{align=N}, collc compile --align)",
                             (unsigned long long)Out.Alignment, (long long)plan::MaxAlignment);
  for (const Op &O : P.ops())
    for (ValueId V : O.Results)
      for (int64_t D : P.value(V).Type.Shape)
        if (D > plan::MaxDimension)
          return createStringError(inconvertibleErrorCode(),
                                   "%s:%s: %%%s : %s has dimension %lld, beyond the plan "
                                   "format's limit of 2^48",
                                   Out.Source.c_str(), Loc(O.Loc).c_str(),
                                   P.value(V).Name.str().c_str(),
                                   P.value(V).Type.str().c_str(), (long long)D);

  // The plan lists every group's members: refuse before building tables
  // for all of them when they would not fit.
  if (std::optional<GroupBudgetExcess> X = checkGroupTableBudget(P, GroupsNeeded::All))
    return createStringError(inconvertibleErrorCode(), "%s:%s: %s", Out.Source.c_str(),
                             Loc(X->Loc).c_str(), X->Msg.c_str());
  for (const Group &G : P.groups()) {
    plan::Group PG;
    PG.Name = G.Name.str();
    PG.Subgroups.assign(G.subgroups().begin(), G.subgroups().end());
    Out.Groups.push_back(std::move(PG));
  }
  // Tensors are numbered in the order the (canonically ordered) program
  // defines them, never by value id, which follows the input's text order.
  std::vector<uint32_t> TensorOf(P.numValues(), ~0u);
  Out.Tensors.reserve(P.numValues());
  // A send's token is no tensor: its wait names the send's comm.
  for (const Op &O : P.ops())
    for (ValueId V : O.Results) {
      if (P.value(V).IsToken)
        continue;
      TensorOf[V] = Out.Tensors.size();
      Out.Tensors.push_back({P.value(V).Name.str(), P.value(V).Type});
    }
  auto Tensors = [&](ArrayRef<ValueId> Vs) {
    std::vector<uint32_t> T;
    T.reserve(Vs.size());
    for (ValueId V : Vs)
      if (!P.value(V).IsToken)
        T.push_back(TensorOf[V]);
    return T;
  };

  for (const LayoutBuffer &B : Mem.Buffers) {
    plan::Buffer PB;
    PB.Bytes = B.Bytes;
    PB.Segments = B.Segments;
    for (const LayoutSlot &S : B.Slots)
      PB.Slots.push_back({TensorOf[S.Value], S.Offset, S.Bytes, S.Mode});
    Out.Buffers.push_back(std::move(PB));
  }

  RankMasks Masks(P);
  std::vector<int32_t> CommOfValue(P.numValues(), -1);
  // A joint set's ops are one comm (check-cross-rank recorded the sets):
  // joint id -> its comm.
  std::map<int64_t, uint32_t> JointComm;
  // A step on some ranks of its comm: a joint comm's side, or a wait that
  // not every rank of its comm runs here.
  // (Every step of a joint comm names its ranks, its first side's too: the
  // comm is known to be joint from its ops, before its later sides are.)
  auto StepOn = [&](plan::StepKind Kind, uint32_t Comm, const plan::RankSet &Ranks,
                    bool Joint) {
    plan::Step St{Kind, Comm};
    if (Joint || !(Ranks == Out.Comms[Comm].Ranks)) {
      St.Ranks = uint32_t(Out.StepRanks.size());
      Out.StepRanks.push_back(Ranks);
    }
    Out.Steps.push_back(St);
  };
  // Where a send/recv's peers or a broadcast's roots are, per rank of \p On.
  auto FillPeers = [&](plan::Comm &C, const Op &O, const plan::RankSet &On) -> Error {
    if (C.Peers.empty())
      C.Peers.assign(P.worldSize(), -1);
    for (int64_t R = 0; R != P.worldSize(); ++R) {
      if (!On.contains(R))
        continue;
      Expected<int64_t> V = O.Peer->evaluate(R, P.worldSize());
      if (!V)
        return createStringError(inconvertibleErrorCode(), "%s:%s: %s on rank %lld: %s",
                                 Out.Source.c_str(), Loc(O.Loc).c_str(),
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
  };
  // The decisions recorded on an op, for the side it becomes.
  auto Explain = [&](plan::CommSide &S, const Op &O) {
    for (StringRef Key : {"fused_why", "bucket_why", "prefetch_why"})
      if (const Attribute *A = O.getAttr(Key); A && A->IsString)
        S.Why.push_back((Key + ": " + A->Str).str());
    S.Loc = Loc(O.Loc);
  };
  const auto &Ops = P.ops();
  // p2p blocks are numbered in program order; each one's comms, waited
  // for at its end.
  int32_t Batches = 0;
  std::vector<uint32_t> BatchComms;
  Out.Steps.reserve(Ops.size() * 2);
  Out.Computes.reserve(Ops.size());
  Out.Comms.reserve(Ops.size());
  for (OpId I = 0; I != Ops.size(); ++I) {
    const Op &O = Ops[I];
    if (O.Kind == OpKind::Compute) {
      plan::Compute C;
      C.Name = O.Callee.str();
      C.Stream = O.Stream;
      C.CostNs = O.CostNs;
      C.Ranks = rankSet(Masks, I, P.worldSize());
      C.Inputs = Tensors(O.Operands);
      C.Outputs = Tensors(O.Results);
      C.Loc = Loc(O.Loc);
      Out.Steps.push_back({plan::StepKind::Compute, uint32_t(Out.Computes.size())});
      Out.Computes.push_back(std::move(C));
      continue;
    }
    if (O.Kind == OpKind::Wait) {
      // One wait step per comm, in the order the values are listed, on the
      // ranks of the waited side that run this wait.
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
          StepOn(plan::StepKind::Wait, uint32_t(C), On, Ops[P.value(V).Def].isJoint());
      }
      continue;
    }
    if (O.isJoint()) {
      int64_t Id = O.getAttr(Op::JointAttr)->Int;
      auto [It, New] = JointComm.try_emplace(Id, uint32_t(Out.Comms.size()));
      if (!New) {
        // A further side of a comm lowered before: its own ranks, tensors
        // and steps, the comm's kind and group (check-cross-rank proved
        // that they agree).
        uint32_t Index = It->second;
        plan::Comm &C = Out.Comms[Index];
        plan::CommSide S;
        S.Ranks = rankSet(Masks, I, P.worldSize());
        S.Inputs = Tensors(O.dataOperands());
        S.Outputs = Tensors(O.Results);
        S.InBuffer = Mem.PerOp[I].In;
        S.OutBuffer = Mem.PerOp[I].Out;
        if (O.HasCountsOperand)
          S.Counts = TensorOf[O.countsOperand()];
        Explain(S, O);
        // Any side async makes the comm async: a blocking side's wait
        // follows its launch at once.
        C.Async |= O.Async;
        C.Fenced |= O.Fenced;
        if (O.Peer)
          if (Error E = FillPeers(C, O, S.Ranks))
            return std::move(E);
        plan::RankSet Ranks = S.Ranks;
        C.Joined.push_back(std::move(S));
        for (ValueId V : O.Results)
          CommOfValue[V] = Index;
        StepOn(plan::StepKind::Launch, Index, Ranks, true);
        if (!O.Async)
          StepOn(plan::StepKind::Wait, Index, Ranks, true);
        continue;
      }
    }
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
    C.Inputs = Tensors(O.dataOperands());
    C.Outputs = Tensors(O.Results);
    C.InBuffer = Mem.PerOp[I].In;
    C.OutBuffer = Mem.PerOp[I].Out;
    // A p2p block's ops are posted together and complete at its end.
    C.Async = O.Async || O.Batch != InvalidId;
    C.Fenced = O.Fenced;
    if (O.Batch != InvalidId) {
      if (I == 0 || Ops[I - 1].Batch != O.Batch)
        ++Batches;
      C.Batch = Batches - 1;
    }
    if (O.Peer)
      if (Error E = FillPeers(C, O, C.Ranks))
        return std::move(E);
    if (O.Kind == OpKind::AllToAllV) {
      if (O.HasCountsOperand)
        C.Counts = TensorOf[O.countsOperand()];
      else
        C.Splits = O.Splits;
    }
    if (const Attribute *B = O.getAttr("bucket"); B && !B->IsString)
      C.Bucket = B->Int;
    // Where it launches and waits, and its buffers, are in the plan itself.
    Explain(C, O);
    uint32_t Index = Out.Comms.size();
    for (ValueId V : O.Results)
      CommOfValue[V] = Index;
    if (O.isJoint()) {
      // The first side of a joint comm: its steps name its ranks.
      plan::RankSet Ranks = C.Ranks;
      Out.Comms.push_back(std::move(C));
      StepOn(plan::StepKind::Launch, Index, Ranks, true);
      if (!O.Async)
        StepOn(plan::StepKind::Wait, Index, Ranks, true);
      continue;
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
  }
  Out.finalize();
  Out.Version = plan::requiredVersion(Out);
  // What the compiler writes, its reader takes: the same checks, here.
  if (Error E = plan::validatePlan(Out, Out.Source.empty() ? "<lowered plan>" : Out.Source))
    return E;
  // Every plan carries its digest from birth: writing it, reading it back
  // and handing it to an executor see the same value.
  Out.Digest = plan::computeDigest(Out);
  return Out;
}

} // namespace collc
