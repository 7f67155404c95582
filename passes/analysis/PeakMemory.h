//===- passes/analysis/PeakMemory.h - Communication memory live at once -*- C++ -*-===//
//
// The peak memory per rank that a schedule's communication holds, computed
// once over the step model (StepSimulator.h) that programs and plans are
// both translated into, so `collc simulate`, the dumps, the plan JSON and
// the scheduler's memory budget all read the same figure.
//
// What counts, on each rank, walking the tasks in issue order:
//  - every tensor a communication op makes (gathered tensors, received
//    tensors, reduce_scatter and all_to_all results) outside a plan buffer,
//    from its launch until the last task on the rank that reads it, or to
//    the end of the step when none does (allocation at launch, as a caching
//    allocator or FSDP does); all_reduce and broadcast work in place and
//    add nothing;
//  - staging: the plan buffers of the rank's buckets, for the whole step,
//    as the runtime holds them (allocated when the executor is made, kept
//    across steps: runtime/exec/DriverExecutor.h, runtime/nccl's setup
//    cudaMalloc): an input buffer less the slots where the model's own
//    tensors live (views), and an output buffer of its own whole (unpack
//    staging, and the results that are views into it, which count here
//    rather than as tensors).
// Not counted: tensors compute makes (activations, gradients, shards),
// which the model holds whatever the schedule.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_PEAKMEMORY_H
#define COLLC_PASSES_ANALYSIS_PEAKMEMORY_H

#include "passes/analysis/StepSimulator.h"

#include <algorithm>
#include <optional>

namespace collc {

struct PeakMemory {
  uint64_t Bytes = 0;        ///< the most live at once on one rank
  uint64_t TensorBytes = 0;  ///< of which tensors
  uint64_t StagingBytes = 0; ///< of which plan buffers (held the whole step)
  uint32_t Tensors = 0;      ///< tensors live at the peak
  int64_t Rank = 0;          ///< the lowest rank that reaches it
  /// SimTask::Source of the launch that reaches it; none when no task
  /// allocates anything.
  std::optional<uint32_t> Source;
};

/// A comm's staging, the one rule both adapters use: the bytes of its input
/// buffer less its view slots (\p InViewBytes: the model's tensors live
/// there), plus its output buffer when it has its own (\p OwnOut).
inline uint64_t stagingBytes(uint64_t InBytes, uint64_t InViewBytes, uint64_t OutBytes,
                             bool OwnOut) {
  return (InBytes - std::min(InBytes, InViewBytes)) + (OwnOut ? OutBytes : 0);
}

/// Whether \p Kind's result takes the place of its input (adds no memory).
bool worksInPlace(OpKind Kind);

/// The peak of \p M (whose ValueBytes is filled). Rank-uniform models are
/// walked once; others once per rank.
PeakMemory peakMemory(const SimModel &M);

} // namespace collc

#endif
