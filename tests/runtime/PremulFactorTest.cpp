//===- tests/runtime/PremulFactorTest.cpp - premul_sum's factor per element type -===//
//
// premul_sum's factor is a value of the element type (ir/PremulFactor.h,
// runtime/exec/PremulFactor.h), as NCCL reads it: the factors refused, the
// bytes NCCL is given, and the local kernels multiplying by the rounded
// value. The conformance suite checks every backend against the same rule
// (ConformanceSuite.h, checkPremulFactor).
//
//===----------------------------------------------------------------------===//

#include "ir/PremulFactor.h"
#include "runtime/exec/ElementConversion.h"
#include "runtime/exec/HostDriverChecks.h"
#include "runtime/exec/PremulFactor.h"
#include "runtime/local/Kernels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace collc;
using namespace collc::rt;

namespace {

std::string problem(ElemType T, double Factor) {
  std::optional<std::string> Why = premulFactorProblem(T, Factor);
  return Why ? *Why : "";
}

TEST(PremulFactor, AnIntegerTypeTakesAnIntegerOfItsRange) {
  EXPECT_EQ(problem(ElemType::U8, 3), "");
  EXPECT_EQ(problem(ElemType::U8, 255), "");
  EXPECT_EQ(problem(ElemType::I8, -128), "");
  EXPECT_EQ(problem(ElemType::I64, -std::ldexp(1.0, 63)), "");
  EXPECT_EQ(problem(ElemType::U64, std::ldexp(1.0, 63)), "");
  EXPECT_EQ(problem(ElemType::I32, 0.5),
            "premul_sum(0.5) over i32: an integer type's factor must be an integer of that type "
            "(NCCL multiplies by a value of the element type; a fraction would be cut off and "
            "skew every result): scale in a floating type, or scale the result");
  EXPECT_EQ(problem(ElemType::U8, 256),
            "premul_sum(256.0) over u8: the factor is a value of the element type, which holds 0 "
            "to 255");
  EXPECT_EQ(problem(ElemType::U32, -1),
            "premul_sum(-1.0) over u32: the factor is a value of the element type, which holds 0 "
            "to 4294967295");
  EXPECT_EQ(problem(ElemType::I64, std::ldexp(1.0, 63)),
            "premul_sum(9223372036854775808.0) over i64: the factor is a value of the element "
            "type, which holds -9223372036854775808 to 9223372036854775807");
  EXPECT_EQ(problem(ElemType::U64, std::ldexp(1.0, 64)),
            "premul_sum(18446744073709551616.0) over u64: the factor is a value of the element "
            "type, which holds 0 to 18446744073709551615");
}

TEST(PremulFactor, AFloatTypeTakesAFiniteValueThatDoesNotRoundToZero) {
  EXPECT_EQ(problem(ElemType::F32, 0.3), "");
  EXPECT_EQ(problem(ElemType::F8E4M3, 448), "");
  EXPECT_EQ(problem(ElemType::BF16, 0), "") << "zero is a value of every type";
  EXPECT_EQ(problem(ElemType::F8E4M3, 449),
            "premul_sum(449.0) over f8e4m3: the factor is a value of the element type, whose "
            "largest is 448.0");
  EXPECT_EQ(problem(ElemType::F16, 1e-8),
            "premul_sum(1e-08) over f16: the factor is a value of the element type, in which "
            "it rounds to 0 (the smallest is 5.960464477539063e-08)");
  EXPECT_EQ(problem(ElemType::F64, INFINITY), "premul_sum(inf) over f64: the factor is not a "
                                              "finite number");
}

TEST(PremulFactor, NcclIsGivenTheElementTypesBytes) {
  auto Bytes = [](ElemType T, double F) { return premulFactorBytes(T, F); };
  using B8 = std::array<unsigned char, 8>;
  EXPECT_EQ(Bytes(ElemType::I8, -3), (B8{0xfd, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Bytes(ElemType::U8, 3), (B8{3, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Bytes(ElemType::U32, 258), (B8{2, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Bytes(ElemType::I64, -1), (B8{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  // 0.3 rounded: bf16 0x3e9a (0.30078125), f16 0x34cd, e4m3 0x2a (0.3125).
  EXPECT_EQ(Bytes(ElemType::BF16, 0.3), (B8{0x9a, 0x3e, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Bytes(ElemType::F16, 0.3), (B8{0xcd, 0x34, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Bytes(ElemType::F8E4M3, 0.3), (B8{0x2a, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(premulFactorValue(ElemType::BF16, 0.3), 0.30078125);
  EXPECT_EQ(premulFactorValue(ElemType::F8E4M3, 0.3), 0.3125);
  EXPECT_EQ(premulFactorValue(ElemType::F64, 0.3), 0.3);
  EXPECT_EQ(premulFactorValue(ElemType::U64, 3), 3.0);
  EXPECT_EQ(premulFactorAs<int8_t>(ElemType::I8, -128), int8_t(-128));
  EXPECT_EQ(premulFactorAs<uint64_t>(ElemType::U64, std::ldexp(1.0, 63)), uint64_t(1) << 63);
}

/// The local kernels multiply by the factor's value in the element type:
/// 100 x bf16(0.3) = 30.078125 rounds to 30.125 in bf16, where 100 x 0.3
/// would round to 30.
TEST(PremulFactor, TheLocalKernelsMultiplyByTheRoundedValue) {
  uint16_t X = floatToBf16(100.0f), Out = 0;
  const char *Src = reinterpret_cast<const char *>(&X);
  char *Dst = reinterpret_cast<char *>(&Out);
  local::reduceInto(ElemType::BF16, ReduceOp::PremulSum, 0.3, &Src, 1, 0, &Dst, 1, 0, 1, false);
  EXPECT_EQ(bf16ToFloat(Out), 30.125f);
  // 3 over u8: 100 x 3 wraps to 44.
  uint8_t Y = 100, YOut = 0;
  const char *YSrc = reinterpret_cast<const char *>(&Y);
  char *YDst = reinterpret_cast<char *>(&YOut);
  local::reduceInto(ElemType::U8, ReduceOp::PremulSum, 3, &YSrc, 1, 0, &YDst, 1, 0, 1, false);
  EXPECT_EQ(YOut, 44);
}

TEST(PremulFactor, HostDriversRefuseAFactorThatIsNoValueOfTheType) {
  char Bytes[16] = {};
  HostResource R{Bytes, sizeof(Bytes)};
  HostElements E{ElemType::I32, 4};
  llvm::Error Err = checkReduction({1, 0}, false, R, R, E, ElemType::I32, ReduceOp::PremulSum, 0.5);
  ASSERT_TRUE(bool(Err));
  EXPECT_NE(llvm::toString(std::move(Err)).find("all_reduce: premul_sum(0.5) over i32"),
            std::string::npos);
  EXPECT_FALSE(bool(checkReduction({1, 0}, true, R, R, {ElemType::I32, 4}, ElemType::I32,
                                   ReduceOp::PremulSum, -7)));
  // Only premul_sum reads the factor.
  EXPECT_FALSE(bool(checkReduction({1, 0}, false, R, R, E, ElemType::I32, ReduceOp::Sum, 0.5)));
}

} // namespace
