//===- tests/runtime/ReductionBoundTest.cpp - Reductions in any order ------===//

#include "runtime/verify/ReductionBound.h"
#include "runtime/exec/ElementConversion.h"
#include "runtime/verify/PlanChecker.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace collc;
using namespace collc::rt;

namespace {

constexpr ReductionOrder Exact{/*RankOrdered=*/true, /*NarrowInF32=*/true};
constexpr ReductionOrder AnyOrder{/*RankOrdered=*/false, /*NarrowInF32=*/true};

/// Element 0 of N single-element sources of C++ type V.
template <typename V> struct OneElement {
  OneElement(ElemType T, ReduceOp Op, std::vector<V> Values, double Scale = 1.0)
      : Values(std::move(Values)) {
    for (const V &X : this->Values)
      Ptrs.push_back(reinterpret_cast<const char *>(&X));
    R = {T, Op, Scale, Ptrs.data(), unsigned(Ptrs.size()), 0};
    referenceReduce(T, Op, Scale, Ptrs.data(), R.N, 0, reinterpret_cast<char *>(&Ref));
  }
  bool accepts(V Got, ReductionOrder O) const {
    return checkReducedElement(R, 0, reinterpret_cast<const char *>(&Got),
                               reinterpret_cast<const char *>(&Ref), O)
        .Acceptable;
  }
  std::vector<V> Values;
  std::vector<const char *> Ptrs;
  ReductionSources R;
  V Ref{};
};

// Mixed magnitudes, so the sum depends on the order.
const std::vector<float> FourRanks = {1.0e4f, 3.14159f, -9.999e3f, 2.7182818e-3f};

TEST(ReductionBoundTest, OneUlpOffAFourRankF32SumPassesOnlyInAnyOrder) {
  for (ReduceOp Op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::PremulSum, ReduceOp::Prod}) {
    OneElement<float> E(ElemType::F32, Op, FourRanks, Op == ReduceOp::PremulSum ? 0.3 : 1.0);
    for (float Dir : {1.0f, -1.0f}) {
      float Got = std::nextafter(E.Ref, Dir * INFINITY);
      EXPECT_TRUE(E.accepts(Got, AnyOrder)) << reduceOpName(Op).str() << " ref " << E.Ref;
      EXPECT_FALSE(E.accepts(Got, Exact)) << reduceOpName(Op).str();
    }
    EXPECT_TRUE(E.accepts(E.Ref, Exact));
    EXPECT_TRUE(E.accepts(E.Ref, AnyOrder));
  }
}

TEST(ReductionBoundTest, TheSumInReverseOrderIsWithinTheBound) {
  std::vector<float> Reversed(FourRanks.rbegin(), FourRanks.rend());
  OneElement<float> E(ElemType::F32, ReduceOp::Sum, FourRanks);
  OneElement<float> R(ElemType::F32, ReduceOp::Sum, Reversed);
  ASSERT_NE(E.Ref, R.Ref) << "the inputs should make the order visible";
  EXPECT_TRUE(E.accepts(R.Ref, AnyOrder));
  EXPECT_FALSE(E.accepts(R.Ref, Exact));
}

TEST(ReductionBoundTest, OnePercentOffFailsInBothModes) {
  for (ReduceOp Op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::PremulSum, ReduceOp::Prod}) {
    OneElement<float> E(ElemType::F32, Op, FourRanks, Op == ReduceOp::PremulSum ? 0.3 : 1.0);
    EXPECT_FALSE(E.accepts(E.Ref * 1.01f, AnyOrder)) << reduceOpName(Op).str();
    EXPECT_FALSE(E.accepts(E.Ref * 1.01f, Exact)) << reduceOpName(Op).str();
  }
  OneElement<double> D(ElemType::F64, ReduceOp::Sum, {1.0e10, 2.5, -3.0e9, 7.0});
  EXPECT_FALSE(D.accepts(D.Ref * 1.01, AnyOrder));
  EXPECT_TRUE(D.accepts(std::nextafter(D.Ref, 0.0), AnyOrder));
}

TEST(ReductionBoundTest, CancellationWidensTheBoundAsItShould) {
  // In rank order 1e300 swallows 2.5 and the sum is 7; in the order
  // (1e300 - 1e300) + 2.5 + 7 it is 9.5. Both are correct sums.
  OneElement<double> D(ElemType::F64, ReduceOp::Sum, {1e300, 2.5, -1e300, 7.0});
  ASSERT_EQ(D.Ref, 7.0);
  EXPECT_TRUE(D.accepts(9.5, AnyOrder));
  EXPECT_FALSE(D.accepts(9.5, Exact));
}

TEST(ReductionBoundTest, MinMaxAndIntegersAreExactInBothModes) {
  for (ReduceOp Op : {ReduceOp::Min, ReduceOp::Max}) {
    OneElement<float> E(ElemType::F32, Op, FourRanks);
    EXPECT_FALSE(E.accepts(std::nextafter(E.Ref, INFINITY), AnyOrder));
    EXPECT_TRUE(E.accepts(E.Ref, AnyOrder));
  }
  // -0 and +0 are the same minimum, whichever order found it.
  OneElement<float> Zeros(ElemType::F32, ReduceOp::Min, {0.0f, -0.0f, 1.0f});
  EXPECT_TRUE(Zeros.accepts(-Zeros.Ref, AnyOrder));
  EXPECT_FALSE(Zeros.accepts(-Zeros.Ref, Exact));
  for (ReduceOp Op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Avg, ReduceOp::Min}) {
    OneElement<int32_t> I(ElemType::I32, Op, {2000000000, 2000000000, -7, 3});
    EXPECT_TRUE(I.accepts(I.Ref, AnyOrder));
    EXPECT_FALSE(I.accepts(I.Ref + 1, AnyOrder)) << reduceOpName(Op).str();
    EXPECT_FALSE(I.accepts(I.Ref + 1, Exact));
  }
}

TEST(ReductionBoundTest, NaNAndInfinitiesAreTreatedConsistently) {
  float NaN = std::numeric_limits<float>::quiet_NaN();
  OneElement<float> E(ElemType::F32, ReduceOp::Sum, {1.0f, NaN, 2.0f, 3.0f});
  ASSERT_TRUE(std::isnan(E.Ref));
  float OtherNaN;
  uint32_t Bits = 0x7fc00123; // another payload
  std::memcpy(&OtherNaN, &Bits, 4);
  EXPECT_TRUE(E.accepts(OtherNaN, AnyOrder));
  EXPECT_FALSE(E.accepts(OtherNaN, Exact)); // rank order promises the same bits
  EXPECT_FALSE(E.accepts(6.0f, AnyOrder));
  OneElement<float> F(ElemType::F32, ReduceOp::Sum, FourRanks);
  EXPECT_FALSE(F.accepts(NaN, AnyOrder));
  float Inf = std::numeric_limits<float>::infinity();
  OneElement<float> I(ElemType::F32, ReduceOp::Sum, {1.0f, Inf, 2.0f, 3.0f});
  EXPECT_TRUE(I.accepts(Inf, AnyOrder));
  EXPECT_FALSE(I.accepts(-Inf, AnyOrder));
  EXPECT_FALSE(I.accepts(3.0e38f, AnyOrder));
  EXPECT_FALSE(F.accepts(Inf, AnyOrder));
}

TEST(ReductionBoundTest, AnF16SumThatOverflowsInOneOrderOnly) {
  // 65504 is f16's largest; 65520 and above round to infinity.
  auto H = [](float F) { return floatToHalf(F); };
  OneElement<uint16_t> E(ElemType::F16, ReduceOp::Sum, {H(65504), H(8), H(-8), H(4)});
  uint16_t Inf = H(INFINITY), Max = H(65504);
  EXPECT_TRUE(E.accepts(Inf, AnyOrder) || E.accepts(Max, AnyOrder));
  EXPECT_TRUE(E.accepts(Inf, AnyOrder)) << "ref " << halfToFloat(E.Ref);
  EXPECT_TRUE(E.accepts(Max, AnyOrder));
  EXPECT_FALSE(E.accepts(H(-INFINITY), AnyOrder));
  EXPECT_FALSE(E.accepts(H(60000), AnyOrder));
}

TEST(ReductionBoundTest, NarrowTypesAreBoundByTheRoundingOfTheResult) {
  auto H = [](float F) { return floatToBf16(F); };
  OneElement<uint16_t> E(ElemType::BF16, ReduceOp::Sum, {H(1.0f), H(3.0e-3f), H(250.0f), H(-7.5f)});
  uint16_t Up = uint16_t(E.Ref + 1), TwoUp = uint16_t(E.Ref + 3); // positive: bits order values
  EXPECT_TRUE(E.accepts(Up, AnyOrder));
  EXPECT_FALSE(E.accepts(Up, Exact));
  EXPECT_FALSE(E.accepts(TwoUp, AnyOrder));
  // fp8 e4m3: three mantissa bits; the neighbour is within the bound.
  OneElement<uint8_t> F(ElemType::F8E4M3, ReduceOp::Sum,
                        {floatToE4m3(1.5f), floatToE4m3(0.125f), floatToE4m3(3.0f)});
  EXPECT_TRUE(F.accepts(uint8_t(F.Ref + 1), AnyOrder)) << e4m3ToFloat(F.Ref);
  EXPECT_FALSE(F.accepts(uint8_t(F.Ref + 4), AnyOrder));
}

TEST(ReductionBoundTest, NarrowSumsInTheirOwnTypeGetTheirOwnRoundoff) {
  // Gloo's float16 rounds every partial sum to f16: four ranks may then be
  // off by more than one rounding of the result.
  auto H = [](float F) { return floatToHalf(F); };
  OneElement<uint16_t> E(ElemType::F16, ReduceOp::Sum, {H(1000.0f), H(0.3f), H(0.3f), H(0.3f)});
  uint16_t Off = uint16_t(E.Ref + 2); // two ulps (0.5 each at 1000)
  ReductionOrder OwnType{/*RankOrdered=*/false, /*NarrowInF32=*/false};
  EXPECT_FALSE(E.accepts(Off, AnyOrder));
  EXPECT_TRUE(E.accepts(Off, OwnType));
}

} // namespace
