//===- tests/api/DumpApiTest.cpp - collc.h: dump and simulate -------------===//
//
// The C API prints the very dumps `collc dump` prints and the figures
// `collc simulate` computes: each is compared with the C++ function.
//
//===----------------------------------------------------------------------===//

#include "ApiTestUtil.h"

#include "compiler/Compile.h"
#include "plan/analysis/PlanStepModel.h"
#include "compiler/dump/Dump.h"
#include "runtime/nccl/NcclListing.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstring>

using namespace collc;
using namespace collc::apitest;

namespace {

std::string dumpOf(collcPlan_t P, const collcDumpOptions_t &O) {
  char *Out = nullptr;
  EXPECT_OK(collcPlanDump(P, &O, &Out));
  std::string S = Out ? Out : "";
  collcFree(Out);
  return S;
}

class CApiDump : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_OK(collcCompile(TwoReduces, nullptr, &P));
    llvm::Expected<plan::Plan> Q = compileProgramText(TwoReduces, "", "<program>");
    ASSERT_TRUE(bool(Q)) << llvm::toString(Q.takeError());
    Want = std::move(*Q);
    collcDumpOptionsInit(&O);
  }
  void TearDown() override { collcPlanDestroy(P); }
  collcPlan_t P = nullptr;
  plan::Plan Want;
  collcDumpOptions_t O;
};

TEST_F(CApiDump, EveryFormatIsTheToolsText) {
  DumpOptions D;
  std::string S;
  llvm::raw_string_ostream OS(S);
  dumpText(Want, D, OS);
  EXPECT_EQ(dumpOf(P, O), OS.str());

  S.clear();
  O.format = collcDumpJSON;
  dumpJSON(Want, D, OS);
  EXPECT_EQ(dumpOf(P, O), OS.str());

  S.clear();
  O.format = collcDumpDot;
  ASSERT_FALSE(bool(dumpDot(Want, D, OS)));
  EXPECT_EQ(dumpOf(P, O), OS.str());

  S.clear();
  O.format = collcDumpTrace;
  O.link = "ib-ndr";
  D.Link = *findLinkClass("ib-ndr");
  ASSERT_FALSE(bool(dumpTrace(Want, D, OS)));
  EXPECT_EQ(dumpOf(P, O), OS.str());
  EXPECT_NE(OS.str().find("traceEvents"), std::string::npos);

  S.clear();
  O.format = collcDumpNccl;
  O.link = nullptr;
  O.rank = 1;
  llvm::Expected<rt::nccl::NcclRankPlan> L = rt::nccl::lowerForRank(Want, 1);
  ASSERT_TRUE(bool(L));
  rt::nccl::printRankPlan(Want, *L, OS);
  EXPECT_EQ(dumpOf(P, O), OS.str());
}

TEST_F(CApiDump, ExplainAndFocusReachTheDump) {
  DumpOptions D;
  D.Explain = true;
  std::string S;
  llvm::raw_string_ostream OS(S);
  dumpText(Want, D, OS);
  O.explain = 1;
  EXPECT_EQ(dumpOf(P, O), OS.str());

  S.clear();
  D = DumpOptions();
  D.Focus.Rank = 1;
  D.Focus.Steps = StepRange{0, 1};
  ASSERT_FALSE(bool(dumpDot(Want, D, OS)));
  collcDumpOptionsInit(&O);
  O.format = collcDumpDot;
  O.focusRank = 1;
  O.focusSteps = "0..1";
  EXPECT_EQ(dumpOf(P, O), OS.str());
}

TEST_F(CApiDump, Refusals) {
  char *Out = nullptr;
  EXPECT_TRUE(refused(collcPlanDump(nullptr, &O, &Out), collcInvalidArgument,
                      {"collcPlanDump: plan is NULL"}));
  EXPECT_TRUE(refused(collcPlanDump(P, &O, nullptr), collcInvalidArgument, {"out is NULL"}));
  O.size = 3;
  EXPECT_TRUE(refused(collcPlanDump(P, &O, &Out), collcInvalidArgument, {"options->size is 3"}));
  collcDumpOptionsInit(&O);
  O.format = collcDumpFormat_t(99); // what a C caller may pass
  EXPECT_TRUE(refused(collcPlanDump(P, &O, &Out), collcInvalidArgument,
                      {"options->format is 99: expected 0..4"}));
  collcDumpOptionsInit(&O);
  O.focusRank = 0;
  EXPECT_TRUE(refused(collcPlanDump(P, &O, &Out), collcInvalidArgument,
                      {"apply to collcDumpDot only"}));
  collcDumpOptionsInit(&O);
  O.format = collcDumpDot;
  O.focusRank = 5;
  EXPECT_TRUE(refused(collcPlanDump(P, &O, &Out), collcInvalidArgument, {"5"}));
  O.focusRank = -1;
  O.focusSteps = "3..1";
  EXPECT_TRUE(refused(collcPlanDump(P, &O, &Out), collcInvalidArgument, {"options->focusSteps"}));
  collcDumpOptionsInit(&O);
  O.link = "carrier-pigeon";
  EXPECT_TRUE(refused(collcPlanDump(P, &O, &Out), collcInvalidArgument,
                      {"options->link", "carrier-pigeon"}));
  collcDumpOptionsInit(&O);
  O.format = collcDumpNccl;
  O.rank = 2;
  EXPECT_TRUE(refused(collcPlanDump(P, &O, &Out), collcInvalidArgument, {"2"}));
  EXPECT_EQ(Out, nullptr);
}

TEST_F(CApiDump, SimulateGivesTheStepModelsFigures) {
  collcSimResult_t R;
  collcSimResultInit(&R);
  ASSERT_OK(collcPlanSimulate(P, "pcie", &R));
  SimOptions Opts;
  Opts.Link = *findLinkClass("pcie");
  llvm::Expected<SimResult> W = simulatePlan(Want, Opts);
  ASSERT_TRUE(bool(W));
  EXPECT_EQ(R.stepUs, W->StepUs);
  EXPECT_EQ(R.computeOnlyUs, W->ComputeOnlyStepUs);
  EXPECT_EQ(R.exposedCommUs, W->ExposedCommUs);
  EXPECT_EQ(R.commBusyUs, W->CommBusyUs);
  EXPECT_EQ(R.slowestRank, W->SlowestRank);
  EXPECT_GT(R.stepUs, 0);

  EXPECT_TRUE(refused(collcPlanSimulate(P, "warp-drive", &R), collcInvalidArgument,
                      {"link", "warp-drive"}));
  EXPECT_TRUE(refused(collcPlanSimulate(nullptr, nullptr, &R), collcInvalidArgument,
                      {"plan is NULL"}));
  EXPECT_TRUE(refused(collcPlanSimulate(P, nullptr, nullptr), collcInvalidArgument,
                      {"result is NULL"}));
  R.size = 0;
  EXPECT_TRUE(refused(collcPlanSimulate(P, nullptr, &R), collcInvalidArgument,
                      {"result->size is 0"}));
}

TEST_F(CApiDump, SimulateStatesThePeakMemory) {
  // All-reduces work in place: no communication allocates.
  collcSimResult_t R = COLLC_SIM_RESULT_INIT;
  ASSERT_OK(collcPlanSimulate(P, nullptr, &R));
  EXPECT_EQ(R.peakMemoryBytes, 0u);
  EXPECT_EQ(R.peakMemoryComm, -1);

  // Two gathers packed into one bucket: tensors plus staging, the figure of
  // `collc simulate`, the dumps and the JSON (planPeakMemory).
  collcPlan_t G = nullptr;
  ASSERT_OK(collcCompile(TwoGathers, nullptr, &G));
  llvm::Expected<plan::Plan> Q = compileProgramText(TwoGathers, "", "<program>");
  ASSERT_TRUE(bool(Q)) << llvm::toString(Q.takeError());
  PeakMemory Peak = planPeakMemory(*Q);
  ASSERT_TRUE(Peak.Source.has_value());
  ASSERT_OK(collcPlanSimulate(G, "ib-ndr", &R));
  EXPECT_EQ(R.peakMemoryBytes, 2656u); // as the budget test of PlanApiTest finds it
  EXPECT_EQ(R.peakMemoryBytes, Peak.Bytes);
  EXPECT_EQ(R.peakMemoryTensorBytes, Peak.TensorBytes);
  EXPECT_EQ(R.peakMemoryStagingBytes, Peak.StagingBytes);
  EXPECT_EQ(R.peakMemoryStagingBytes, 2528u);
  EXPECT_EQ(R.peakMemoryTensors, int64_t(Peak.Tensors));
  EXPECT_EQ(R.peakMemoryRank, Peak.Rank);
  EXPECT_EQ(R.peakMemoryComm, int64_t(*Peak.Source));
  collcDumpOptions_t J;
  collcDumpOptionsInit(&J);
  J.format = collcDumpJSON;
  std::string Json = dumpOf(G, J);
  EXPECT_NE(Json.find("\"peak_memory\": {\n    \"bytes\": 2656,"), std::string::npos) << Json;

  // A caller built against version 1 (before the peak memory fields): its
  // figures are written and nothing beyond its size.
  struct {
    collcSimResult_t R;
    char Canary[8];
  } Old;
  std::memset(&Old, 0x5a, sizeof Old);
  Old.R.size = offsetof(collcSimResult_t, peakMemoryBytes);
  ASSERT_OK(collcPlanSimulate(G, "ib-ndr", &Old.R));
  EXPECT_EQ(Old.R.stepUs, R.stepUs);
  EXPECT_EQ(Old.R.slowestRank, R.slowestRank);
  EXPECT_EQ(Old.R.size, offsetof(collcSimResult_t, peakMemoryBytes));
  const unsigned char *Beyond = reinterpret_cast<const unsigned char *>(&Old.R.peakMemoryBytes);
  for (size_t I = 0; I != sizeof Old - offsetof(collcSimResult_t, peakMemoryBytes); ++I)
    ASSERT_EQ(Beyond[I], 0x5a) << "byte " << I << " beyond a version-1 struct was written";
  Old.R.size = offsetof(collcSimResult_t, peakMemoryBytes) - 1;
  EXPECT_TRUE(refused(collcPlanSimulate(G, nullptr, &Old.R), collcInvalidArgument,
                      {"result->size is"}));
  collcPlanDestroy(G);
}

} // namespace
