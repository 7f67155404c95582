//===- runtime/local/Kernels.h - Reductions and copies on the host -*- C++ -*-===//
//
// The arithmetic of the local backend. Every element of a reduction is
// computed by one thread, from the sources in rank order, so every rank gets
// the same bits whatever the timing. f16, bf16 and fp8 accumulate in f32;
// integers wrap like two's complement (as NCCL's do).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LOCAL_KERNELS_H
#define COLLC_RUNTIME_LOCAL_KERNELS_H

#include "ir/Types.h"

#include <cstdint>

namespace collc::rt::local {

/// Reduces \p Count elements: source r contributes Srcs[r] + SrcOffset
/// elements (r = 0 .. NSrcs-1, in that order); the result goes to each
/// Dsts[d] + DstOffset elements. `avg` divides by \p NSrcs; `premul_sum`
/// multiplies every input by \p Scale first. \p Streaming writes around the
/// cache (for results that will not be read soon; call storeFence() after).
void reduceInto(ElemType T, ReduceOp Op, double Scale, const char *const *Srcs, unsigned NSrcs,
                uint64_t SrcOffset, char *const *Dsts, unsigned NDsts, uint64_t DstOffset,
                uint64_t Count, bool Streaming);

/// The vectorized part of reduceInto for f32 and f64 (KernelsX86.cpp):
/// returns how many leading elements it reduced (0 for other types or
/// CPUs); reduceInto finishes the rest.
uint64_t reduceFast(ElemType T, ReduceOp Op, double Scale, const char *const *Srcs, unsigned NSrcs,
                    uint64_t SrcOffset, char *const *Dsts, unsigned NDsts, uint64_t DstOffset,
                    uint64_t Count, bool Streaming);

/// Whether \p T accumulates in a wider type (f16, bf16 and fp8: in f32).
bool accumulatesWider(ElemType T);
/// reduceInto for such a \p T (accumulatesWider), one destination, with
/// the results left in f32, unrounded: where they are reduced further (a
/// hierarchical all_reduce's partial), so that they round once, at the end.
void reduceWidened(ElemType T, ReduceOp Op, double Scale, const char *const *Srcs, unsigned N,
                   uint64_t SrcOffset, float *Out, uint64_t Count);
/// Rounds \p Count f32 values into \p T (accumulatesWider), as reduceInto
/// rounds its accumulators.
void narrowFrom(ElemType T, const float *In, char *Out, uint64_t Count);

/// Divides \p Count elements at \p Data by \p N in place, as avg's last
/// step does (the same arithmetic: narrow floats through f32, integers
/// truncating through 64 bits).
void divideInPlace(ElemType T, char *Data, uint64_t Count, unsigned N);

/// memcpy, or with \p Streaming a copy that writes around the cache.
void copyBytes(char *Dst, const char *Src, uint64_t Bytes, bool Streaming);

/// Orders streaming stores before what follows (a release of the results).
void storeFence();

/// Results this large (bytes one thread writes) go around the cache: larger
/// than the last-level cache, they would only evict what the next operation
/// reads; smaller, the consumer finds them in cache.
constexpr uint64_t StreamingThreshold = 8 << 20;

} // namespace collc::rt::local

#endif
