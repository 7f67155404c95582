//===- passes/analysis/PeakMemory.cpp - Communication memory live at once ----===//

#include "passes/analysis/PeakMemory.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace llvm;

namespace collc {

bool worksInPlace(OpKind Kind) { return Kind == OpKind::AllReduce || Kind == OpKind::Broadcast; }

namespace {

constexpr size_t Never = ~size_t(0);

/// One rank's walk; \p LastUse and \p FirstUse are scratch of NumValues.
PeakMemory walkRank(const SimModel &M, int64_t Rank, std::vector<size_t> &LastUse,
                    std::vector<size_t> &FirstUse) {
  const std::vector<SimTask> &Tasks = M.Tasks;
  std::fill(LastUse.begin(), LastUse.end(), Never);
  std::fill(FirstUse.begin(), FirstUse.end(), Never);
  for (size_t I = 0; I != Tasks.size(); ++I)
    if (Tasks[I].runsOn(Rank))
      for (uint32_t V : Tasks[I].Inputs) {
        LastUse[V] = I;
        if (FirstUse[V] == Never)
          FirstUse[V] = I;
      }
  // Frees due at each task: tensors after it, staging before it (its wait).
  struct Due {
    uint64_t Tensor = 0, Staging = 0;
    uint32_t Tensors = 0;
  };
  std::vector<Due> FreeAt(Tasks.size());
  uint64_t Tensor = 0, Staging = 0;
  uint32_t Live = 0;
  PeakMemory Peak;
  Peak.Rank = Rank;
  for (size_t I = 0; I != Tasks.size(); ++I) {
    const SimTask &T = Tasks[I];
    if (!T.runsOn(Rank))
      continue;
    Staging -= FreeAt[I].Staging;
    if (T.Kind != OpKind::Compute) {
      size_t FirstUseOfResult = Never;
      if (!worksInPlace(T.Kind))
        for (uint32_t V : T.Outputs) {
          Tensor += M.ValueBytes[V];
          ++Live;
          FirstUseOfResult = std::min(FirstUseOfResult, FirstUse[V]);
          if (LastUse[V] != Never) {
            FreeAt[LastUse[V]].Tensor += M.ValueBytes[V];
            ++FreeAt[LastUse[V]].Tensors;
          }
        }
      else
        for (uint32_t V : T.Outputs)
          FirstUseOfResult = std::min(FirstUseOfResult, FirstUse[V]);
      if (T.StagingBytes) {
        Staging += T.StagingBytes;
        if (FirstUseOfResult != Never)
          FreeAt[FirstUseOfResult].Staging += T.StagingBytes;
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
  std::vector<size_t> LastUse(M.NumValues), FirstUse(M.NumValues);
  bool Uniform = llvm::all_of(M.Tasks, [](const SimTask &T) { return T.Ranks.empty(); });
  PeakMemory Best;
  for (int64_t R = 0; R != (Uniform ? std::min<int64_t>(M.World, 1) : M.World); ++R) {
    PeakMemory P = walkRank(M, R, LastUse, FirstUse);
    if (P.Bytes > Best.Bytes || R == 0)
      Best = P;
  }
  return Best;
}

} // namespace collc
