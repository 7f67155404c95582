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

} // namespace
