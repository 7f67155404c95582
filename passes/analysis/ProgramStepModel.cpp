//===- passes/analysis/ProgramStepModel.cpp - A program, for the simulator -===//

#include "passes/analysis/ProgramStepModel.h"

#include "ir/ProgramSchedule.h"

using namespace llvm;

namespace collc {

SimModel programStepModel(const Program &P, const RankMasks &Masks) {
  SimModel M;
  M.World = P.worldSize();
  M.NumValues = P.numValues();
  M.ValueBytes.reserve(M.NumValues);
  for (ValueId V = 0; V != P.numValues(); ++V)
    M.ValueBytes.push_back(P.value(V).Type.bytes());
  // Tables only for the groups ops use; no task names the others.
  std::vector<bool> Used = groupsUsedByOps(P);
  for (GroupId G = 0; G != P.groups().size(); ++G)
    M.Groups.push_back(Used[G] ? SimGroup{P.group(G).subgroups(), P.group(G).subgroupOfTable()}
                               : SimGroup{});
  for (OpId I = 0; I != P.ops().size(); ++I) {
    const Op &O = P.ops()[I];
    if (O.Kind != OpKind::Compute && !isCommunication(O.Kind))
      continue;
    SimTask T;
    T.Kind = O.Kind;
    T.Source = I;
    if (const BitVector *Mask = Masks.mask(I))
      T.Ranks = *Mask;
    // Every operand, split sizes included: they must be ready too.
    T.Inputs.assign(O.Operands.begin(), O.Operands.end());
    T.Outputs.assign(O.Results.begin(), O.Results.end());
    T.Stream = O.Stream;
    T.CostNs = O.CostNs;
    T.Async = O.Async || O.Batch != InvalidId;
    T.Fenced = O.Fenced;
    // A collective's group; a send's or recv's, whose communicator it
    // matches on (-1: the world).
    if (isCollective(O.Kind) || O.Kind == OpKind::Send || O.Kind == OpKind::Recv)
      T.Group = O.Group == InvalidId ? -1 : int32_t(O.Group);
    for (ValueId V : O.dataOperands())
      T.InBytes += double(P.value(V).Type.bytes());
    for (ValueId V : O.Results)
      T.OutBytes += double(P.value(V).Type.bytes());
    if (O.Kind == OpKind::Send || O.Kind == OpKind::Recv) {
      T.Peers.assign(M.World, -1);
      for (int64_t R = 0; R != M.World; ++R)
        if (T.runsOn(R))
          T.Peers[R] = int32_t(peerRankOf(P, O, R));
    }
    M.Tasks.push_back(std::move(T));
  }
  return M;
}

PeakMemory programPeakMemory(const Program &P, const BufferLayoutOptions &Layout) {
  RankMasks Masks(P);
  SimModel M = programStepModel(P, Masks);
  BufferLayout L = computeBufferLayout(P, Layout);
  for (SimTask &T : M.Tasks) {
    const OpBuffers &B = L.PerOp[T.Source];
    bool OwnOut = B.Out >= 0 && B.Out != B.In;
    T.StagingBytes =
        commStagingBytes(ArrayRef<LayoutBuffer>(L.Buffers), B.In, B.Out,
                         P.ops()[T.Source].dataOperands(), [](const LayoutSlot &S) { return S.Value; });
    // Results that are views of the output buffer count with it.
    if (OwnOut && L.Buffers[B.Out].Segments == 1)
      for (const LayoutSlot &S : L.Buffers[B.Out].Slots)
        if (S.Mode == SlotMode::View)
          M.ValueBytes[S.Value] = 0;
  }
  return peakMemory(M);
}

Expected<SimResult> simulateStep(const Program &P, const SimOptions &Opts) {
  if (!fitsStepSimulation(P.worldSize(), P.numValues()))
    return createStringError(inconvertibleErrorCode(),
                             "@%s is too large to simulate (world %lld x %zu values)",
                             P.name().str().c_str(), (long long)P.worldSize(), P.numValues());
  RankMasks Masks(P);
  std::optional<SimResult> R = simulateModel(programStepModel(P, Masks), Opts);
  if (!R)
    return createStringError(inconvertibleErrorCode(),
                             "cannot simulate @%s: its ranks do not agree or deadlock (run "
                             "check-cross-rank for details)",
                             P.name().str().c_str());
  return std::move(*R);
}

Expected<std::vector<double>> freeCommFinishUs(const Program &P) {
  SimOptions Opts;
  Opts.Link = freeLinkClass();
  Opts.RecordFinish = Opts.StepOnly = true;
  Expected<SimResult> Sim = simulateStep(P, Opts);
  if (!Sim)
    return Sim.takeError();
  Sim->FinishUs.resize(P.ops().size(), 0.0);
  return std::move(Sim->FinishUs);
}

} // namespace collc
