//===- passes/analysis/BufferLayout.h - Buffers and offsets of communication -*- C++ -*-===//
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
// The layout is a function of the program and of BufferLayoutOptions. The
// plan-memory pass records it in the IR and leaves its options in the
// PassContext; the lowering lays out the plan with those same options, so
// the IR and the plan agree.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_BUFFERLAYOUT_H
#define COLLC_PASSES_ANALYSIS_BUFFERLAYOUT_H

#include "ir/Program.h"

#include <string>
#include <vector>

namespace collc {

/// How buffers are laid out: the options of `plan-memory{align=,views=}`,
/// in this one place.
struct BufferLayoutOptions {
  uint64_t Alignment = 256; ///< of every slot, a power of two
  bool AllowViews = true;   ///< false packs every input that could be a view
};

struct LayoutSlot {
  ValueId Value;
  uint64_t Offset; ///< in the buffer; within each segment for segmented buffers
  uint64_t Bytes;  ///< of the whole tensor
  SlotMode Mode;
};

struct LayoutBuffer {
  uint64_t Bytes = 0;
  /// 1, or the group size when the tensors are split into per-rank chunks.
  int64_t Segments = 1;
  std::vector<LayoutSlot> Slots;
};

struct OpBuffers {
  int32_t In = -1;  ///< buffer index; -1: the op works on its tensors directly
  int32_t Out = -1; ///< buffer index; equal to In when in place
};

struct BufferLayout {
  uint64_t Alignment = 256;
  std::vector<LayoutBuffer> Buffers;
  std::vector<OpBuffers> PerOp; ///< indexed by OpId
};

BufferLayout computeBufferLayout(const Program &P, const BufferLayoutOptions &Opts = {});

/// "in #0: %a view@0, %b pack@3328; out #0 (in place)" for op \p I.
std::string describeOpBuffers(const Program &P, const BufferLayout &M, OpId I);

} // namespace collc

#endif
