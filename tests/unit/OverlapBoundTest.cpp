//===- tests/unit/OverlapBoundTest.cpp - The perfect-overlap bound --------===//
//
// The bound's figures on a program small enough to work by hand, and that it
// is a bound: no plan of any example, bucketed any way, simulates a shorter
// step on any link class.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "passes/analysis/OverlapBound.h"
#include "passes/analysis/ProgramStepModel.h"

using namespace collc;
using namespace collc::test;

namespace {

// Two gradients ready at 100 and 200 us, each 56 us of bandwidth on ib-ndr
// (1.44 MB x 2*7/8 / 45 GB/s), alpha 25 us; the optimizer (50 us) needs both.
const char *TwoGradients = R"(program @two world(8) {
  group @dp = world
  %a = compute @bwd.a cost(100us) : f32[360000]
  %b = compute @bwd.b(%a) cost(100us) : f32[360000]
  %ra = all_reduce sum %a in @dp
  %rb = all_reduce sum %b in @dp
  compute @opt(%ra, %rb) cost(50us)
}
)";

TEST(OverlapBound, ByHand) {
  ParsedProgram P = parseOK(TwoGradients);
  ASSERT_NE(P.Prog, nullptr);
  llvm::Expected<OverlapBound> B = perfectOverlapBound(*P.Prog, *findLinkClass("ib-ndr"));
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  // The optimizer waits for max(100 + 25 + 112, 200 + 25 + 56) = 281 us.
  EXPECT_NEAR(B->CommDoneUs, 281, 1e-6);
  EXPECT_NEAR(B->StepUs, 331, 1e-6);
  EXPECT_NEAR(B->ComputeOnlyUs, 250, 1e-6);
  EXPECT_NEAR(B->exposedUs(), 81, 1e-6);
  EXPECT_NEAR(B->exposedWithSplitTailUs(), 31, 1e-6);
}

TEST(OverlapBound, NoPlanBeatsIt) {
  for (const std::string &Path : exampleFiles()) {
    std::string Text = readOK(Path);
    ParsedProgram P = parseOK(Text, Path);
    ASSERT_NE(P.Prog, nullptr) << Path;
    for (const LinkClass &L : linkClasses()) {
      llvm::Expected<OverlapBound> B = perfectOverlapBound(*P.Prog, L);
      ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
      SimOptions Opts;
      Opts.Link = L;
      llvm::Expected<SimResult> Written = simulateStep(*P.Prog, Opts);
      ASSERT_TRUE(bool(Written)) << llvm::toString(Written.takeError());
      EXPECT_LE(B->StepUs, Written->StepUs + 1e-3) << Path << " as written on " << L.Name.str();
      for (std::string Bucket : {std::string("bucket{policy=ddp}"), std::string("bucket{policy=fixed,bytes=4MiB}"),
                                 "bucket{policy=auto,link=" + L.Name.str() + "}"}) {
        plan::Plan Plan = compileOK(Text, defaultPipeline(Bucket), Path);
        ASSERT_FALSE(Plan.Digest.empty()) << Path << " with " << Bucket;
        SimResult R = simulateOK(Plan, L);
        EXPECT_LE(B->StepUs, R.StepUs + 1e-3) << Path << " with " << Bucket << " on "
                                              << L.Name.str();
        // Its compute-only step lets communication run in any order; a
        // plan's keeps the plan's order (the same for DDP).
        EXPECT_LE(B->ComputeOnlyUs, R.ComputeOnlyStepUs + 1e-3) << Path << " with " << Bucket;
        if (llvm::StringRef(Path).endswith("gpt2_ddp.coll")) {
          EXPECT_NEAR(B->ComputeOnlyUs, R.ComputeOnlyStepUs, 1e-6) << Bucket;
        }
      }
    }
  }
}

} // namespace
