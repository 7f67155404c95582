//===- passes/MemoryPlan.h - Buffers and offsets of communication -*- C++ -*-===//
//
// Where the tensors of fused communication live. An op that moves one tensor
// works on the tensor where it is (the model's memory, or a slot of an
// earlier buffer). An op that moves several (a bucket) gets an input buffer
// and an output buffer (the same one for in-place all_reduce and
// broadcast), and every tensor gets a slot at an aligned offset:
//  - view: the tensor is the slot. The model allocates it inside the buffer
//    (zero copy, like DDP's gradient_as_bucket_view); possible for a tensor a
//    compute op produces that no earlier buffer holds, and for results.
//  - pack: the tensor lives elsewhere and is copied in before launch
//    (reduce_scatter and all_to_all buckets interleave tensors per rank).
//  - unpack: the result is copied out after completion (all_gather and
//    all_to_all buckets gather per-rank segments).
// Buffers of fused ops are laid out as `segments` equal parts, one per rank
// of the group, when the op exchanges per-rank chunks.
//
// The plan is a function of the program, so the plan-memory pass (which
// records it in the IR) and the lowering (which writes it to the plan file)
// compute the same thing.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_MEMORYPLAN_H
#define COLLC_PASSES_MEMORYPLAN_H

#include "ir/Program.h"

#include <string>
#include <vector>

namespace collc {

struct MemorySlot {
  ValueId Value;
  uint64_t Offset; ///< in the buffer; within each segment for segmented buffers
  uint64_t Bytes;  ///< of the whole tensor
  SlotMode Mode;
};

struct MemoryBuffer {
  uint64_t Bytes = 0;
  /// 1, or the group size when the tensors are split into per-rank chunks.
  int64_t Segments = 1;
  std::vector<MemorySlot> Slots;
};

struct OpMemory {
  int32_t In = -1;  ///< buffer index; -1: the op works on its tensors directly
  int32_t Out = -1; ///< buffer index; equal to In when in place
};

struct MemoryPlan {
  uint64_t Alignment = 256;
  std::vector<MemoryBuffer> Buffers;
  std::vector<OpMemory> PerOp; ///< indexed by OpId
};

/// \p AllowViews false packs every input that could have been a view.
MemoryPlan planMemory(const Program &P, uint64_t Alignment = 256, bool AllowViews = true);

/// "in #0: %a view@0, %b pack@3328; out #0 (in place)" for op \p I.
std::string describeOpMemory(const Program &P, const MemoryPlan &M, OpId I);

} // namespace collc

#endif
