//===- runtime/mpi/MpiUserOps.cpp - Reductions MPI's built-ins do not give -===//

#include "runtime/mpi/MpiUserOps.h"

#include "runtime/exec/ElementTraits.h"

#include <cstdint>
#include <cstring>

namespace collc::rt::mpi {

namespace {

void wrappingByteSum(void *In, void *InOut, int *Len, MPI_Datatype *) {
  auto *A = static_cast<const uint8_t *>(In);
  auto *B = static_cast<uint8_t *>(InOut);
  for (int I = 0; I != *Len; ++I)
    B[I] = uint8_t(A[I] + B[I]);
}

/// InOut = In op InOut, where In comes from the lower ranks (MPI's order
/// for a non-commutative op): a tie keeps In. \p T: the narrow float's
/// ElementTraits.
template <typename T, bool Max>
void orderedMinMax(void *In, void *InOut, int *Len, MPI_Datatype *) {
  using S = typename T::Storage;
  auto *A = static_cast<const char *>(In);
  auto *B = static_cast<char *>(InOut);
  for (int I = 0; I != *Len; ++I) {
    S X, Y;
    std::memcpy(&X, A + I * sizeof(S), sizeof(S));
    std::memcpy(&Y, B + I * sizeof(S), sizeof(S));
    float FX = T::load(X), FY = T::load(Y);
    bool TakeY = Max ? FY > FX : FY < FX;
    if (!TakeY)
      std::memcpy(B + I * sizeof(S), &X, sizeof(S));
  }
}

struct UserOps {
  MPI_Op ByteSum;
  /// Min and max of each narrow float, at its type's index (none for
  /// other types).
  MPI_Op MinMax[NumElemTypes][2] = {};
  UserOps() {
    MPI_Op_create(&wrappingByteSum, 1, &ByteSum);
    for (unsigned I = 0; I != NumElemTypes; ++I)
      visitElemType(ElemType(I), [&](auto E) {
        using Traits = decltype(E);
        if constexpr (Traits::IsNarrowFloat) {
          MPI_Op_create(&orderedMinMax<Traits, false>, 0, &MinMax[I][0]);
          MPI_Op_create(&orderedMinMax<Traits, true>, 0, &MinMax[I][1]);
        }
      });
  }
};

/// Created at first use (MPI_Op_create is local); MPI_Finalize frees them.
const UserOps &userOps() {
  static const UserOps Ops;
  return Ops;
}

bool isNarrowFloat(ElemType T) {
  return visitElemType(T, [](auto E) { return decltype(E)::IsNarrowFloat; });
}

/// The datatype MPI reduces \p T as (ir/ElemTypes.def).
MPI_Datatype builtinType(ElemType T) {
  switch (T) {
#define COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                        \
  case ElemType::Enum:                                                                             \
    return Mpi;
#include "ir/ElemTypes.def"
  }
  return MPI_BYTE;
}

/// The MPI_Op of \p Op (ir/ReduceOps.def).
MPI_Op builtinOp(ReduceOp Op) {
  switch (Op) {
#define COLLC_REDUCE_OP(Enum, Spelling, Combine, Mpi)                                              \
  case ReduceOp::Enum:                                                                             \
    return Mpi;
#include "ir/ReduceOps.def"
  }
  return MPI_OP_NULL;
}

} // namespace

MpiReduction mpiReduction(ElemType Wire, ReduceOp Op) {
  MPI_Datatype Ty = builtinType(Wire);
  if ((Op == ReduceOp::Min || Op == ReduceOp::Max) && isNarrowFloat(Wire))
    return {Ty, userOps().MinMax[unsigned(Wire)][Op == ReduceOp::Max]};
  MPI_Op M = builtinOp(Op);
  if (M == MPI_SUM && (Wire == ElemType::I8 || Wire == ElemType::U8))
    return {MPI_UINT8_T, userOps().ByteSum};
  return {Ty, M};
}

} // namespace collc::rt::mpi
