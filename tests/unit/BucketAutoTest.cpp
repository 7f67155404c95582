//===- tests/unit/BucketAutoTest.cpp - auto is never worse than ddp -------===//
//
// On every example and every link class, the plan compiled with
// bucket{policy=auto,link=L} simulates no more exposed communication on L
// than the plan with DDP's default buckets; the per-boundary choice reaches
// the perfect-overlap bound when communication is free to overlap; and on
// GPT-2 auto is within 10% of the program's bound (OverlapBound.h).
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "passes/analysis/BucketBoundaries.h"
#include "passes/analysis/OverlapBound.h"

using namespace collc;
using namespace collc::test;

namespace {

double exposedUs(llvm::StringRef Text, llvm::StringRef Bucket, const LinkClass &Link) {
  plan::Plan P = compileOK(Text, defaultPipeline(Bucket), "example.coll");
  if (P.Digest.empty())
    return -1;
  return simulateOK(P, Link).ExposedCommUs;
}

TEST(BucketAuto, NeverWorseThanDDPOnExamples) {
  for (const std::string &Path : exampleFiles()) {
    std::string Text = readOK(Path);
    ASSERT_FALSE(Text.empty()) << Path;
    for (const LinkClass &L : linkClasses()) {
      double Ddp = exposedUs(Text, "bucket{policy=ddp}", L);
      double Auto = exposedUs(Text, ("bucket{policy=auto,link=" + L.Name + "}").str(), L);
      EXPECT_LE(Auto, Ddp) << Path << " on " << L.Name.str();
    }
  }
}

TEST(BucketAuto, WithinTenPercentOfTheBoundOnGPT2) {
  // Issue 13's target on the DDP example: no plan could expose less than
  // the perfect-overlap bound, and auto is within 10% of it on every link.
  std::string Text = readOK(examplePath("gpt2_ddp"));
  ParsedProgram P = parseOK(Text);
  ASSERT_NE(P.Prog, nullptr);
  for (const LinkClass &L : linkClasses()) {
    llvm::Expected<OverlapBound> B = perfectOverlapBound(*P.Prog, L);
    ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
    double Auto = exposedUs(Text, ("bucket{policy=auto,link=" + L.Name + "}").str(), L);
    EXPECT_GE(Auto, B->exposedUs() - 1e-3) << L.Name.str();
    EXPECT_LE(Auto, 1.10 * B->exposedUs() + 1.0) << L.Name.str();
  }
}

TEST(BucketAuto, BoundariesFollowReadyTimes) {
  // Three tensors ready 100 us apart, each 10 us of bandwidth: each goes
  // alone, as soon as it is ready, and the last finishes at the bound.
  std::vector<double> Ready = {0, 100, 200}, Cost = {10, 10, 10};
  std::vector<BucketChoice> C = chooseBucketBoundaries(Ready, Cost, 5);
  ASSERT_EQ(C.size(), 3u);
  EXPECT_EQ(C[1].Begin, 1u);
  EXPECT_DOUBLE_EQ(C.back().FinishUs, 215);
  EXPECT_DOUBLE_EQ(bucketFinishLowerBound(Ready, Cost, 5), 215);
  // All ready at once: one bucket pays alpha once.
  C = chooseBucketBoundaries({0, 0, 0}, Cost, 5);
  ASSERT_EQ(C.size(), 1u);
  EXPECT_DOUBLE_EQ(C[0].FinishUs, 35);
}

TEST(BucketAuto, MatchesExhaustiveSearch) {
  // Every split of 8 tensors (2^7), against the O(n) choice.
  std::vector<double> Ready = {0, 3, 3, 40, 41, 90, 95, 200};
  std::vector<double> Cost = {20, 1, 30, 5, 60, 2, 2, 15};
  double Alpha = 7, Best = 1e18;
  for (unsigned Mask = 0; Mask != 1u << 7; ++Mask) {
    double Free = 0, ReadyMax = 0, Bytes = 0;
    for (size_t I = 0; I != 8; ++I) {
      ReadyMax = std::max(ReadyMax, Ready[I]);
      Bytes += Cost[I];
      if (I == 7 || (Mask >> I & 1)) {
        Free = std::max(Free, ReadyMax) + Alpha + Bytes;
        Bytes = 0;
      }
    }
    Best = std::min(Best, Free);
  }
  EXPECT_DOUBLE_EQ(chooseBucketBoundaries(Ready, Cost, Alpha).back().FinishUs, Best);
}

} // namespace
