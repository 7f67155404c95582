//===- tests/runtime/ElementConversionTest.cpp - Narrow float rounding -----===//

#include "runtime/exec/ElementConversion.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace collc::rt;

namespace {

TEST(ElementConversionTest, HalfKnownValuesAndRoundToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);                     // rounds up past the largest finite
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);        // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00); // tie to even
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02); // tie to even
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  for (uint32_t H = 0; H != 0x10000; ++H) {
    float F = halfToFloat(uint16_t(H));
    if (!std::isnan(F)) {
      ASSERT_EQ(floatToHalf(F), H) << "f16 0x" << std::hex << H;
    }
  }
}

TEST(ElementConversionTest, Bf16KnownValues) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80); // tie to even
  EXPECT_EQ(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
}

TEST(ElementConversionTest, Fp8SaturatesAndRoundTripsEveryValue) {
  EXPECT_EQ(floatToE4m3(448.0f), 0x7e);
  EXPECT_EQ(floatToE4m3(1000.0f), 0x7e); // saturates: e4m3 has no infinity
  EXPECT_EQ(floatToE4m3(-1000.0f), 0xfe);
  EXPECT_EQ(floatToE4m3(std::numeric_limits<float>::infinity()), 0x7e);
  EXPECT_EQ(floatToE4m3(std::nanf("")) & 0x7f, 0x7f);
  EXPECT_EQ(floatToE5m2(57344.0f), 0x7b);
  EXPECT_EQ(floatToE5m2(1e9f), 0x7b); // saturating, as __NV_SATFINITE
  EXPECT_EQ(e4m3ToFloat(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(e5m2ToFloat(0x3c), 1.0f);
  for (unsigned V = 0; V != 256; ++V) {
    float A = e4m3ToFloat(uint8_t(V)), B = e5m2ToFloat(uint8_t(V));
    if (!std::isnan(A)) {
      ASSERT_EQ(floatToE4m3(A), V) << "e4m3 0x" << std::hex << V;
    }
    if (std::isfinite(B)) {
      ASSERT_EQ(floatToE5m2(B), V) << "e5m2 0x" << std::hex << V;
    }
  }
}

} // namespace
