//===- tests/runtime/ElementTraitsTest.cpp - The runtime's side of the type tables -===//
//
// ir/ElemTypes.def and ir/ReduceOps.def as the runtime reads them: every
// type's traits (storage size, float or not, the f32 round trip of a narrow
// float's limits), visitElemType's dispatch, and NCCL's names in the call
// listing, row by row. MPI's datatypes and ops are checked where MPI runs
// (tests/runtime/MpiExecutorTest.cpp); NCCL's enumerators on a GPU
// (tests/gpu/NcclGpuTest.cpp).
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/ElementTraits.h"
#include "runtime/nccl/NcclLowering.h"

#include "gtest/gtest.h"

#include <cmath>
#include <iterator>
#include <limits>

using namespace collc;
using namespace collc::rt;

namespace {

/// A type's row as the traits report it, through visitElemType.
struct Seen {
  ElemType Type;
  unsigned StorageBytes;
  bool Float, Narrow;
};

Seen seen(ElemType T) {
  return visitElemType(T, [](auto E) {
    using Traits = decltype(E);
    return Seen{Traits::Type, unsigned(sizeof(typename Traits::Storage)), Traits::IsFloat,
                Traits::IsNarrowFloat};
  });
}

/// Checks a float type's limits against what its own arithmetic does.
template <typename Traits> void checkLimits() {
  constexpr FloatLimits L = Traits::Limits;
  using S = typename Traits::Storage;
  using A = typename Traits::Acc;
  if constexpr (!Traits::IsNarrowFloat) {
    EXPECT_EQ(int(L.Digits), std::numeric_limits<S>::digits);
    EXPECT_EQ(L.MinSubnormal, double(std::numeric_limits<S>::denorm_min()));
    EXPECT_EQ(L.MaxFinite, double(std::numeric_limits<S>::max()));
  } else {
    // The limits are values of the type: they survive a round trip through
    // its bits, and the smallest subnormal is the bit pattern 1.
    EXPECT_EQ(double(Traits::load(Traits::store(A(L.MaxFinite)))), L.MaxFinite);
    EXPECT_EQ(double(Traits::load(S(1))), L.MinSubnormal);
    // Nothing finite lies above the largest finite value, and one unit of
    // the last place below 1 is 2^-Digits.
    S Max = Traits::store(A(L.MaxFinite));
    EXPECT_FALSE(std::isfinite(Traits::load(S(Max + 1))) &&
                 Traits::load(S(Max + 1)) > Traits::load(Max));
    S One = Traits::store(1.0f);
    EXPECT_EQ(double(Traits::load(S(One - 1))), 1.0 - std::ldexp(1.0, -int(L.Digits)));
  }
}

} // namespace

TEST(ElementTraits, EveryTypeOfTheTableHasItsTraits) {
  unsigned Rows = 0;
#define COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                        \
  {                                                                                                \
    SCOPED_TRACE(Spelling);                                                                        \
    ++Rows;                                                                                        \
    Seen S = seen(ElemType::Enum);                                                                 \
    EXPECT_EQ(S.Type, ElemType::Enum);                                                             \
    EXPECT_EQ(S.StorageBytes, sizeof(Storage));                                                    \
    EXPECT_EQ(S.StorageBytes, elemTypeBytes(ElemType::Enum));                                      \
    EXPECT_EQ(S.Float, isFloatType(ElemType::Enum));                                               \
  }
#define COLLC_NARROW_FLOAT(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite,    \
                           Decode, Encode)                                                         \
  COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                              \
  EXPECT_TRUE(seen(ElemType::Enum).Narrow) << Spelling;                                            \
  EXPECT_EQ(ElementTraits<ElemType::Enum>::load(Storage(1)), Decode(Storage(1))) << Spelling;      \
  EXPECT_EQ(ElementTraits<ElemType::Enum>::store(1.0f), Encode(1.0f)) << Spelling;
#define COLLC_NATIVE_FLOAT(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite)    \
  COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                              \
  EXPECT_FALSE(seen(ElemType::Enum).Narrow) << Spelling;
#define COLLC_INT_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                         \
  COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                              \
  EXPECT_FALSE(seen(ElemType::Enum).Narrow) << Spelling;
#include "ir/ElemTypes.def"
  EXPECT_EQ(Rows, NumElemTypes);
}

TEST(ElementTraits, EveryFloatTypesLimitsAreItsOwn) {
#define COLLC_FLOAT_TYPE(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite)      \
  {                                                                                                \
    SCOPED_TRACE(Spelling);                                                                        \
    checkLimits<ElementTraits<ElemType::Enum>>();                                                  \
  }
#include "ir/ElemTypes.def"
}

TEST(ElementTraits, NcclNamesEveryTypeAndPlainOpAsTheTableDoes) {
#define COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                        \
  EXPECT_EQ(nccl::ncclTypeName(ElemType::Enum), #Nccl);
#include "ir/ElemTypes.def"
#define COLLC_PLAIN_REDUCE(Enum, Spelling, Combine, Mpi, Nccl)                                     \
  EXPECT_EQ(nccl::ncclOpName(ReduceOp::Enum), #Nccl);
// NCCL has no op of its own for a scaled reduction: the listing names it.
#define COLLC_SCALED_REDUCE(Enum, Spelling, Combine, Mpi)                                          \
  EXPECT_EQ(nccl::ncclOpName(ReduceOp::Enum), Spelling);
#include "ir/ReduceOps.def"
}
