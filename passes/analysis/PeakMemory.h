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
//    across steps: runtime/nccl's setup cudaMallocs exactly these; the host
//    executors, runtime/exec/DriverExecutor.h, allocate every plan buffer
//    on every rank, more than this figure where buckets run on some ranks
//    only): an input buffer less the view slots of the comm's own inputs
//    (the model's tensors live there; an in-place bucket's result views
//    share those bytes and subtract nothing), and an output buffer of its
//    own whole (unpack staging, and the results that are views into it,
//    which count here rather than as tensors).
// Not counted: tensors compute makes (activations, gradients, shards),
// which the model holds whatever the schedule.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_PEAKMEMORY_H
#define COLLC_PASSES_ANALYSIS_PEAKMEMORY_H

#include "passes/analysis/StepSimulator.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"

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

/// A comm's staging, the one rule both step models use (ProgramStepModel.cpp
/// over a BufferLayout, plan/analysis/PlanStepModel.cpp over a plan's buffers):
/// its input buffer \p In less the view slots of the comm's own \p Inputs
/// (the model's tensors live there, as with DDP's gradient_as_bucket_view),
/// plus its output buffer \p Out when it has its own. An in-place
/// (all_reduce, broadcast) buffer also holds a view slot per result over
/// the same bytes; those are the runtime's memory, not the model's, so a
/// bucket of packed inputs counts whole. \p TensorOf names a slot's tensor.
template <typename BufferT, typename TensorOfFn>
uint64_t commStagingBytes(llvm::ArrayRef<BufferT> Buffers, int32_t In, int32_t Out,
                          llvm::ArrayRef<uint32_t> Inputs, TensorOfFn TensorOf) {
  uint64_t Bytes = 0;
  if (In >= 0) {
    const BufferT &B = Buffers[In];
    uint64_t Views = 0;
    if (B.Segments == 1) {
      llvm::DenseSet<uint32_t> IsInput(Inputs.begin(), Inputs.end());
      for (const auto &S : B.Slots)
        if (S.Mode == SlotMode::View && IsInput.contains(TensorOf(S)))
          Views += S.Bytes;
    }
    Bytes = B.Bytes - std::min(B.Bytes, Views);
  }
  if (Out >= 0 && Out != In)
    Bytes += Buffers[Out].Bytes;
  return Bytes;
}

/// Whether \p Kind's result takes the place of its input (adds no memory).
bool worksInPlace(OpKind Kind);

/// The peak of \p M (whose ValueBytes is filled). Rank-uniform models are
/// walked once; others once per rank.
PeakMemory peakMemory(const SimModel &M);

} // namespace collc

#endif
