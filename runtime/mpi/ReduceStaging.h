//===- runtime/mpi/ReduceStaging.h - Host arithmetic around MPI's reductions -*- C++ -*-===//
//
// MPI reduces with sum, prod, min and max over its own types. What collc's
// reductions add is done on the host around the MPI call, with the same
// arithmetic as runtime/verify's reference (and the local backend):
// - premul_sum scales each rank's input *before* the sum (x_r * s, then
//   sum): the reference does so, and a factor applied after the sum would
//   round differently and could overflow where the scaled inputs do not;
// - avg sums, then divides by the group size *after* (integers: the wrapped
//   sum divided as 64-bit, as the reference);
// - f16, bf16 and fp8 sums and products travel as f32: widened (and
//   scaled) before, reduced as MPI_FLOAT, divided and rounded once after.
//   This is the reference's "accumulate in f32, round once"; a user-defined
//   MPI_Op over 2-byte elements would round at every step of MPI's tree and
//   disagree with the other backends. The price is 2x (4x for fp8) the
//   bytes on the wire for these. Their min and max round nothing and stay
//   in their own type (MpiUserOps.h).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_REDUCESTAGING_H
#define COLLC_RUNTIME_MPI_REDUCESTAGING_H

#include "ir/Types.h"

#include <cstdint>

namespace collc::rt::mpi {

/// The type a reduction of \p T with \p Op is carried in: f32 for sums and
/// products of the narrow floats, \p T itself otherwise.
ElemType wireType(ElemType T, ReduceOp Op);

/// Whether the input must be rewritten before MPI sees it (widened, or scaled).
bool stagesInput(ElemType T, ReduceOp Op);
/// Whether the result must be rewritten after (narrowed, or averaged).
bool stagesOutput(ElemType T, ReduceOp Op);

/// \p Count elements of \p T from \p Src into \p Wire as wireType(T, Op),
/// premul_sum's factor applied.
void stageInput(ElemType T, ReduceOp Op, double Scale, const char *Src, uint64_t Count,
                char *Wire);

/// \p Count reduced wireType(T, Op) elements from \p Wire into \p Dst as \p T,
/// avg's division by \p Ranks applied. \p Wire may equal \p Dst when T is
/// its own wire type.
void finishOutput(ElemType T, ReduceOp Op, unsigned Ranks, const char *Wire, uint64_t Count,
                  char *Dst);

} // namespace collc::rt::mpi

#endif
