//===- runtime/mpi/MpiUserOps.cpp - Reductions MPI's built-ins do not give -===//

#include "runtime/mpi/MpiUserOps.h"

#include "runtime/exec/ElementConversion.h"

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
/// for a non-commutative op): a tie keeps In.
template <typename S, float (*ToF)(S), bool Max>
void orderedMinMax(void *In, void *InOut, int *Len, MPI_Datatype *) {
  auto *A = static_cast<const char *>(In);
  auto *B = static_cast<char *>(InOut);
  for (int I = 0; I != *Len; ++I) {
    S X, Y;
    std::memcpy(&X, A + I * sizeof(S), sizeof(S));
    std::memcpy(&Y, B + I * sizeof(S), sizeof(S));
    float FX = ToF(X), FY = ToF(Y);
    bool TakeY = Max ? FY > FX : FY < FX;
    if (!TakeY)
      std::memcpy(B + I * sizeof(S), &X, sizeof(S));
  }
}

struct UserOps {
  MPI_Op ByteSum;
  MPI_Op MinMax[4][2]; ///< f16, bf16, e4m3, e5m2 x min, max
  UserOps() {
    MPI_Op_create(&wrappingByteSum, 1, &ByteSum);
    MPI_Op_create(&orderedMinMax<uint16_t, halfToFloat, false>, 0, &MinMax[0][0]);
    MPI_Op_create(&orderedMinMax<uint16_t, halfToFloat, true>, 0, &MinMax[0][1]);
    MPI_Op_create(&orderedMinMax<uint16_t, bf16ToFloat, false>, 0, &MinMax[1][0]);
    MPI_Op_create(&orderedMinMax<uint16_t, bf16ToFloat, true>, 0, &MinMax[1][1]);
    MPI_Op_create(&orderedMinMax<uint8_t, e4m3ToFloat, false>, 0, &MinMax[2][0]);
    MPI_Op_create(&orderedMinMax<uint8_t, e4m3ToFloat, true>, 0, &MinMax[2][1]);
    MPI_Op_create(&orderedMinMax<uint8_t, e5m2ToFloat, false>, 0, &MinMax[3][0]);
    MPI_Op_create(&orderedMinMax<uint8_t, e5m2ToFloat, true>, 0, &MinMax[3][1]);
  }
};

/// Created at first use (MPI_Op_create is local); MPI_Finalize frees them.
const UserOps &userOps() {
  static const UserOps Ops;
  return Ops;
}

int narrowIndex(ElemType T) {
  switch (T) {
  case ElemType::F16:
    return 0;
  case ElemType::BF16:
    return 1;
  case ElemType::F8E4M3:
    return 2;
  case ElemType::F8E5M2:
    return 3;
  default:
    return -1;
  }
}

MPI_Datatype builtinType(ElemType T) {
  switch (T) {
  case ElemType::F32:
    return MPI_FLOAT;
  case ElemType::F64:
    return MPI_DOUBLE;
  case ElemType::I8:
    return MPI_INT8_T;
  case ElemType::U8:
    return MPI_UINT8_T;
  case ElemType::I32:
    return MPI_INT32_T;
  case ElemType::U32:
    return MPI_UINT32_T;
  case ElemType::I64:
    return MPI_INT64_T;
  case ElemType::U64:
    return MPI_UINT64_T;
  case ElemType::F16:
  case ElemType::BF16:
    return MPI_UINT16_T;
  case ElemType::F8E4M3:
  case ElemType::F8E5M2:
    return MPI_UINT8_T;
  }
  return MPI_BYTE;
}

} // namespace

MpiReduction mpiReduction(ElemType Wire, ReduceOp Op) {
  MPI_Datatype Ty = builtinType(Wire);
  switch (Op) {
  case ReduceOp::Prod:
    return {Ty, MPI_PROD};
  case ReduceOp::Min:
  case ReduceOp::Max:
    if (int N = narrowIndex(Wire); N >= 0)
      return {Ty, userOps().MinMax[N][Op == ReduceOp::Max]};
    return {Ty, Op == ReduceOp::Min ? MPI_MIN : MPI_MAX};
  default: // sum, avg, premul_sum
    if (Wire == ElemType::I8 || Wire == ElemType::U8)
      return {MPI_UINT8_T, userOps().ByteSum};
    return {Ty, MPI_SUM};
  }
}

} // namespace collc::rt::mpi
