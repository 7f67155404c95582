//===- runtime/gloo/GlooReduction.h - A reduction as it travels over Gloo -*- C++ -*-===//
//
// Gloo reduces pairwise with a function we pass it (out = f(a, b) over n
// elements), on the types C++ has. collc's reductions need more: f16, bf16
// and fp8 accumulate in f32 and round once (runtime/exec/ElementConversion.h),
// premul_sum scales every input, avg divides the sum. So a reduction goes
// over the wire in three parts:
//   toWire    this rank's input, widened to f32 (narrow floats) and scaled
//             (premul_sum), into a staging buffer, only where needed;
//   reducer   Gloo's pairwise function for the wire type (avg and
//             premul_sum reduce as sums; integers wrap like two's complement);
//   fromWire  the sum divided (avg) and narrowed back, rounding once.
// With two ranks every result is bit for bit the rank-ordered reference;
// with more, the small all_reduce's doubling (GlooSmallAllReduce.h) and
// Gloo's ring add floats in another order (the last bits differ).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GLOOREDUCTION_H
#define COLLC_RUNTIME_GLOO_GLOOREDUCTION_H

#include "ir/Types.h"

#include <cstddef>
#include <cstdint>

namespace collc::rt::gloo {

/// The type on the wire: f32 for f16, bf16 and fp8; the type itself else.
ElemType wireType(ElemType T);

/// Whether the input must be copied to the wire type first (narrow floats,
/// premul_sum); otherwise Gloo reduces the caller's buffers directly.
bool needsStaging(ElemType T, ReduceOp Op);

/// Whether the reduced wire values need fromWire (staged, or avg).
bool needsFinish(ElemType T, ReduceOp Op);

/// \p Count elements of \p T at \p Src to the wire type at \p Wire,
/// multiplied by \p Scale for premul_sum.
void toWire(ElemType T, ReduceOp Op, double Scale, const char *Src, char *Wire, uint64_t Count);

/// \p Count reduced wire values at \p Wire to \p T at \p Dst (which may be
/// \p Wire when no staging was needed): avg divides by \p Ranks.
void fromWire(ElemType T, ReduceOp Op, unsigned Ranks, const char *Wire, char *Dst,
              uint64_t Count);

/// Gloo's pairwise reduction for \p Wire and \p Op (avg and premul_sum
/// are sums): out[i] = a[i] op b[i], out may alias a or b.
using PairReduce = void (*)(void *Out, const void *A, const void *B, size_t Count);
PairReduce wireReducer(ElemType Wire, ReduceOp Op);

} // namespace collc::rt::gloo

#endif
