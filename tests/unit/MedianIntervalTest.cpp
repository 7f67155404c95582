//===- tests/unit/MedianIntervalTest.cpp - A median and how sure it is ----===//
//
// The order statistics that bound the median (checked against the published
// table), the interval and quartiles of small samples worked by hand, and
// that the interval covers the true median as often as it says: 4,000 draws
// of 30 samples from a skewed distribution with a known median.
//
//===----------------------------------------------------------------------===//

#include "tools/collc/bench/MedianInterval.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

using namespace collc::tool;

namespace {

TEST(MedianIntervalTest, BoundRanksMatchTheBinomialTable) {
  // 95%: none below 6 samples (1/32 on each side is already > 2.5%).
  EXPECT_EQ(medianBoundRank(1, 0.95), 0u);
  EXPECT_EQ(medianBoundRank(5, 0.95), 0u);
  EXPECT_EQ(medianBoundRank(6, 0.95), 1u);
  EXPECT_EQ(medianBoundRank(10, 0.95), 2u);
  EXPECT_EQ(medianBoundRank(30, 0.95), 10u);
  EXPECT_EQ(medianBoundRank(100, 0.95), 40u);
  // 99%: wider.
  EXPECT_EQ(medianBoundRank(30, 0.99), 8u);
  // Large counts stay finite and near n/2 - 0.98 sqrt(n).
  size_t L = medianBoundRank(20000, 0.95);
  EXPECT_GT(L, 9850u);
  EXPECT_LT(L, 9870u);
}

TEST(MedianIntervalTest, ThirtySamplesWorkedByHand) {
  std::vector<double> S;
  for (int I = 30; I >= 1; --I) // unsorted on purpose
    S.push_back(I);
  MedianInterval M = medianInterval(S);
  EXPECT_EQ(M.N, 30u);
  EXPECT_TRUE(M.Covers);
  EXPECT_DOUBLE_EQ(M.Median, 15.5);
  EXPECT_DOUBLE_EQ(M.Lo, 10); // the 10th smallest
  EXPECT_DOUBLE_EQ(M.Hi, 21); // the 21st
  EXPECT_DOUBLE_EQ(M.P25, 8.25);
  EXPECT_DOUBLE_EQ(M.P75, 22.75);
}

TEST(MedianIntervalTest, TooFewSamplesGiveTheirRangeAndSaySo) {
  MedianInterval M = medianInterval({3.0, 1.0, 2.0});
  EXPECT_FALSE(M.Covers);
  EXPECT_DOUBLE_EQ(M.Median, 2);
  EXPECT_DOUBLE_EQ(M.Lo, 1);
  EXPECT_DOUBLE_EQ(M.Hi, 3);
  MedianInterval One = medianInterval({7.0});
  EXPECT_DOUBLE_EQ(One.Median, 7);
  EXPECT_DOUBLE_EQ(One.P25, 7);
  EXPECT_DOUBLE_EQ(One.P75, 7);
}

TEST(MedianIntervalTest, CoversTheTrueMedianAsOftenAsItSays) {
  // Exponential samples (a long tail, as timings on a busy host have):
  // median ln 2. With 30 samples the interval [x(10), x(21)] covers it
  // with probability 1 - 2 P(B <= 9) = 0.957.
  std::mt19937_64 Rng(11);
  const int Draws = 4000;
  int Covered = 0;
  for (int D = 0; D != Draws; ++D) {
    std::vector<double> S;
    for (int I = 0; I != 30; ++I) {
      double U = double(Rng() >> 11) / double(1ull << 53);
      S.push_back(-std::log1p(-U));
    }
    MedianInterval M = medianInterval(S);
    Covered += M.Lo <= std::log(2.0) && std::log(2.0) <= M.Hi;
  }
  double Rate = double(Covered) / Draws;
  // 0.957 +- 4 standard errors (0.0032 each).
  EXPECT_GT(Rate, 0.944);
  EXPECT_LT(Rate, 0.970);
}

} // namespace
