//===- tests/unit/PrefetchTest.cpp - Bounded prefetch on the Llama plan ----===//
//
// The Done line of issue 13 item 1, held on the committed example: with
// FSDP's default prefetch (the default pipeline), Llama-2-7B FSDP on 8 ranks
// holds no more than FSDP's default would (the gradient shards, plus at most
// three units' gathered weights: two in flight and the one in use), far less
// than gathering every unit up front, and exposes no more communication on
// any link class measured.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <algorithm>

using namespace collc;
using namespace collc::test;

namespace {

plan::Plan compileLlama(llvm::StringRef SchedulePass) {
  return compileOK(readOK(examplePath("llama2_7b_fsdp")),
                   defaultPipeline("bucket{policy=ddp}", "plan-memory", SchedulePass),
                   "llama2_7b_fsdp.coll");
}

TEST(Prefetch, BaselinesAreNamedForBenches) {
  EXPECT_EQ(fsdpDefaultSchedulePass(), "schedule{prefetch=2}");
  EXPECT_EQ(unboundedSchedulePass(), "schedule{prefetch=0}");
}

TEST(Prefetch, FsdpDefaultHoldsShardsAndThreeUnitsAndExposesNoMore) {
  plan::Plan Bounded = compileLlama(fsdpDefaultSchedulePass());
  plan::Plan UpFront = compileLlama(unboundedSchedulePass());
  // The default pipeline is FSDP's default.
  EXPECT_EQ(compileLlama("schedule").Digest, Bounded.Digest);
  PeakMemory B = planPeakMemory(Bounded), U = planPeakMemory(UpFront);
  // FSDP's default, from the plan: every reduce_scatter result (this rank's
  // gradient shards, live to the optimizer) and three of the largest unit.
  uint64_t Shards = 0, Unit = 0;
  for (const plan::Comm &C : Bounded.Comms) {
    if (C.Kind == plan::CommKind::ReduceScatter)
      Shards += C.outputBytes(Bounded.Tensors);
    if (C.Kind == plan::CommKind::AllGather)
      Unit = std::max(Unit, C.outputBytes(Bounded.Tensors));
  }
  ASSERT_GT(Unit, 0u);
  EXPECT_LE(B.Bytes, Shards + 3 * Unit) << "shards " << Shards << ", unit " << Unit;
  EXPECT_LT(B.Bytes * 5, U.Bytes) << B.Bytes << " vs " << U.Bytes;
  for (const char *Link : {"h100-nvlink", "ib-ndr"}) {
    llvm::Expected<LinkClass> L = findLinkClass(Link);
    ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
    EXPECT_LE(simulateOK(Bounded, *L).ExposedCommUs, simulateOK(UpFront, *L).ExposedCommUs)
        << Link;
  }
}

// Per-unit launch points under a memory budget equal to FSDP's default
// peak: the Done line, peak no more than FSDP's default and exposed
// communication no worse, on each link measured; on Llama-2-7B the budget
// search lands on FSDP's default figures (its exposed communication is the
// first two gathers and the last two reduce_scatters, which no launch
// point hides: docs/passes.md).
TEST(Prefetch, ABudgetOfFsdpDefaultsPeakHoldsNoMoreAndExposesNoMore) {
  plan::Plan Default = compileLlama(fsdpDefaultSchedulePass());
  uint64_t Peak = planPeakMemory(Default).Bytes;
  for (const char *Link : {"h100-nvlink", "ib-ndr"}) {
    plan::Plan Budgeted = compileLlama(
        ("schedule{memory-budget=" + std::to_string(Peak) + ",link=" + Link + "}").c_str());
    EXPECT_LE(planPeakMemory(Budgeted).Bytes, Peak) << Link;
    llvm::Expected<LinkClass> L = findLinkClass(Link);
    ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
    SimOptions Opts;
    Opts.Link = *L;
    llvm::Expected<SimResult> RD = simulatePlan(Default, Opts);
    llvm::Expected<SimResult> RB = simulatePlan(Budgeted, Opts);
    ASSERT_TRUE(bool(RD)) << llvm::toString(RD.takeError());
    ASSERT_TRUE(bool(RB)) << llvm::toString(RB.takeError());
    EXPECT_LE(RB->ExposedCommUs, RD->ExposedCommUs) << Link;
  }
}

// The search chooses units apart where that pays: GPT-2 XL FSDP (8 ranks,
// comm-bound on h100-nvlink) within FSDP's default peak plus one unit's
// gathered weights gets a shorter step than every uniform depth that fits.
TEST(Prefetch, PerUnitChoicesBeatEveryUniformDepthThatFits) {
  auto Buf = llvm::MemoryBuffer::getFile(COLLC_EXAMPLES_DIR "/../tests/bench/programs/gpt2_xl_fsdp_w8.coll");
  ASSERT_TRUE(bool(Buf));
  auto Compile = [&](const std::string &Schedule) {
    llvm::Expected<plan::Plan> P = compileProgramText(
        (*Buf)->getBuffer(), defaultPipeline("bucket{policy=ddp}", "plan-memory", Schedule),
        "gpt2_xl_fsdp_w8.coll");
    EXPECT_TRUE(bool(P)) << (P ? "" : llvm::toString(P.takeError()));
    return P ? std::move(*P) : plan::Plan();
  };
  auto Step = [](const plan::Plan &P) {
    llvm::Expected<SimResult> R = simulatePlan(P, SimOptions());
    EXPECT_TRUE(bool(R)) << (R ? "" : llvm::toString(R.takeError()));
    return R ? R->StepUs : 0.0;
  };
  plan::Plan Default = Compile(fsdpDefaultSchedulePass());
  uint64_t Unit = 0;
  for (const plan::Comm &C : Default.Comms)
    if (C.Kind == plan::CommKind::AllGather)
      Unit = std::max(Unit, C.outputBytes(Default.Tensors));
  uint64_t Budget = planPeakMemory(Default).Bytes + Unit;
  plan::Plan Budgeted = Compile("schedule{memory-budget=" + std::to_string(Budget) + "}");
  EXPECT_LE(planPeakMemory(Budgeted).Bytes, Budget);
  double Chosen = Step(Budgeted);
  for (unsigned Depth : {1u, 2u, 3u, 4u, 6u, 9u, 13u, 19u, 28u, 42u, 63u, 0u}) {
    plan::Plan Uniform = Compile("schedule{prefetch=" + std::to_string(Depth) + "}");
    if (planPeakMemory(Uniform).Bytes > Budget)
      continue;
    EXPECT_LE(Chosen, Step(Uniform)) << "prefetch=" << Depth;
  }
  EXPECT_LT(Chosen, Step(Default));
}

} // namespace
