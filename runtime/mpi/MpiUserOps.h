//===- runtime/mpi/MpiUserOps.h - Reductions MPI's built-ins do not give -*- C++ -*-===//
//
// The MPI_Op and MPI_Datatype a reduction of the wire type (ReduceStaging.h)
// goes with. Built-ins where they are right; user-defined ops
// (MPI_Op_create) where they are not:
// - 8-bit integer sums: Open MPI 4.1's AVX op component adds 8-bit
//   integers with saturation (127 + 1 = 127), not wrapping as the reference
//   and every other backend do; a commutative wrapping byte sum replaces
//   it (two's complement: one function for i8 and u8).
// - min and max of the narrow floats (f16, bf16, fp8), which MPI lacks: in
//   their own type (no rounding), as non-commutative ops so that MPI applies
//   them in rank order and a tie (+0 and -0) keeps the lower rank's value,
//   as the reference does. Carried as unsigned integers of their size.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_MPIUSEROPS_H
#define COLLC_RUNTIME_MPI_MPIUSEROPS_H

#include "ir/Types.h"

#include <mpi.h>

namespace collc::rt::mpi {

struct MpiReduction {
  MPI_Datatype Type;
  MPI_Op Op;
};

/// How MPI reduces \p Wire elements with \p Op (sum for avg and
/// premul_sum, which ReduceStaging completes).
MpiReduction mpiReduction(ElemType Wire, ReduceOp Op);

} // namespace collc::rt::mpi

#endif
