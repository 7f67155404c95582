//===- passes/analysis/PeakMemory.cpp - Communication memory live at once ----===//

#include "passes/analysis/PeakMemory.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace llvm;

namespace collc {

bool worksInPlace(OpKind Kind) { return Kind == OpKind::AllReduce || Kind == OpKind::Broadcast; }

namespace {

constexpr size_t Never = ~size_t(0);

/// One rank's walk; \p LastUse is scratch of NumValues.
PeakMemory walkRank(const SimModel &M, int64_t Rank, std::vector<size_t> &LastUse) {
  const std::vector<SimTask> &Tasks = M.Tasks;
  std::fill(LastUse.begin(), LastUse.end(), Never);
  for (size_t I = 0; I != Tasks.size(); ++I)
    if (Tasks[I].runsOn(Rank))
      for (uint32_t V : Tasks[I].Inputs)
        LastUse[V] = I;
  // Frees due after each task.
  struct Due {
    uint64_t Tensor = 0;
    uint32_t Tensors = 0;
  };
  std::vector<Due> FreeAt(Tasks.size());
  // Plan buffers are held for the whole step.
  uint64_t Tensor = 0, Staging = 0;
  for (const SimTask &T : Tasks)
    if (T.runsOn(Rank) && T.Kind != OpKind::Compute)
      Staging += T.StagingBytes;
  uint32_t Live = 0;
  PeakMemory Peak;
  Peak.Rank = Rank;
  for (size_t I = 0; I != Tasks.size(); ++I) {
    const SimTask &T = Tasks[I];
    if (!T.runsOn(Rank))
      continue;
    if (T.Kind != OpKind::Compute) {
      if (!worksInPlace(T.Kind))
        for (uint32_t V : T.Outputs) {
          if (!M.ValueBytes[V])
            continue;
          Tensor += M.ValueBytes[V];
          ++Live;
          if (LastUse[V] != Never) {
            FreeAt[LastUse[V]].Tensor += M.ValueBytes[V];
            ++FreeAt[LastUse[V]].Tensors;
          }
        }
      if (Tensor + Staging > Peak.Bytes) {
        Peak.Bytes = Tensor + Staging;
        Peak.TensorBytes = Tensor;
        Peak.StagingBytes = Staging;
        Peak.Tensors = Live;
        Peak.Source = T.Source;
      }
    }
    Tensor -= FreeAt[I].Tensor;
    Live -= FreeAt[I].Tensors;
  }
  return Peak;
}

} // namespace

PeakMemory peakMemory(const SimModel &M) {
  std::vector<size_t> LastUse(M.NumValues);
  bool Uniform = llvm::all_of(M.Tasks, [](const SimTask &T) { return T.Ranks.empty(); });
  PeakMemory Best;
  for (int64_t R = 0; R != (Uniform ? std::min<int64_t>(M.World, 1) : M.World); ++R) {
    PeakMemory P = walkRank(M, R, LastUse);
    if (P.Bytes > Best.Bytes || R == 0)
      Best = P;
  }
  return Best;
}

} // namespace collc
