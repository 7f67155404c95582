//===- plan/analysis/PlanStepModel.cpp - A plan, for the simulator -------------===//

#include "plan/analysis/PlanStepModel.h"

#include "plan/analysis/CommKind.h"

using namespace llvm;

namespace collc {

static BitVector ranksOf(const plan::RankSet &S, int64_t World) {
  BitVector Out;
  if (S.All)
    return Out;
  Out.resize(World);
  for (int32_t R : S.Ranks)
    Out.set(R);
  return Out;
}

SimModel planStepModel(const plan::Plan &P) {
  SimModel M;
  M.World = P.World;
  M.NumValues = P.Tensors.size();
  for (const plan::Tensor &T : P.Tensors)
    M.ValueBytes.push_back(T.Type.bytes());
  for (const plan::Group &G : P.Groups)
    M.Groups.push_back({G.Subgroups, G.SubgroupOf});
  for (const plan::Step &St : P.Steps) {
    if (St.Kind == plan::StepKind::Wait)
      continue;
    SimTask T;
    T.Source = St.Index;
    T.Ranks = ranksOf(P.ranksOf(St), P.World);
    if (St.Kind == plan::StepKind::Compute) {
      const plan::Compute &C = P.Computes[St.Index];
      T.Inputs.assign(C.Inputs.begin(), C.Inputs.end());
      T.Outputs.assign(C.Outputs.begin(), C.Outputs.end());
      T.Stream = C.Stream;
      T.CostNs = C.CostNs;
    } else {
      // A joint comm is a task per side (each launched by its own step), so
      // its members meet as one collective, each with its own tensors.
      const plan::Comm &C = P.Comms[St.Index];
      const plan::CommSide &Side = P.sideOf(St);
      T.Kind = opKindOf(C.Kind);
      T.Inputs.assign(Side.Inputs.begin(), Side.Inputs.end());
      // Runtime split sizes must be ready too, as in ProgramStepModel.
      if (Side.Counts >= 0)
        T.Inputs.push_back(uint32_t(Side.Counts));
      T.Outputs.assign(Side.Outputs.begin(), Side.Outputs.end());
      T.Group = C.Group;
      T.Async = C.Async;
      T.Fenced = C.Fenced;
      T.InBytes = double(Side.inputBytes(P.Tensors));
      T.OutBytes = double(Side.outputBytes(P.Tensors));
      T.StagingBytes = commStagingBytes(ArrayRef<plan::Buffer>(P.Buffers), Side.InBuffer,
                                        Side.OutBuffer, Side.Inputs,
                                        [](const plan::Slot &S) { return S.Tensor; });
      // Results that are views of the output buffer count with it.
      if (Side.OutBuffer >= 0 && Side.OutBuffer != Side.InBuffer &&
          P.Buffers[Side.OutBuffer].Segments == 1)
        for (const plan::Slot &S : P.Buffers[Side.OutBuffer].Slots)
          if (S.Mode == SlotMode::View)
            M.ValueBytes[S.Tensor] = 0;
      if (C.Kind == plan::CommKind::Send || C.Kind == plan::CommKind::Recv)
        T.Peers = C.Peers;
    }
    M.Tasks.push_back(std::move(T));
  }
  return M;
}

PeakMemory planPeakMemory(const plan::Plan &P) { return peakMemory(planStepModel(P)); }

Expected<SimResult> simulatePlan(const plan::Plan &P, const SimOptions &Opts) {
  if (!fitsStepSimulation(P.World, P.Tensors.size()))
    return createStringError(inconvertibleErrorCode(),
                             "plan @%s is too large to simulate (world %lld x %zu tensors)",
                             P.Program.c_str(), (long long)P.World, P.Tensors.size());
  std::optional<SimResult> R = simulateModel(planStepModel(P), Opts);
  if (!R)
    return createStringError(inconvertibleErrorCode(),
                             "plan @%s stalls: its ranks' steps do not match up (was it "
                             "compiled with check-cross-rank?)",
                             P.Program.c_str());
  return std::move(*R);
}

} // namespace collc
