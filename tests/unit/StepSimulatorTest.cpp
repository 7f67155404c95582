// One step simulator: a program and the plan it compiles to, translated into
// the simulator's model by their two adapters, give the same step, event by
// event; and the core's own rules hold on a model built by hand.
#include "TestUtil.h"

#include "compiler/Compile.h"
#include "plan/analysis/PlanStepModel.h"
#include "passes/analysis/ProgramStepModel.h"

#include "llvm/Support/raw_ostream.h"

using namespace collc;

namespace {

const char *Examples[] = {"gpt2_ddp", "llama2_7b_fsdp", "moe_alltoallv", "megatron_tp2_pp4"};

/// Compiles \p Parsed in place and expects the compiled program and its plan
/// to simulate to the same step, event by event.
void expectSameStep(ParsedProgram &Parsed) {
  Program &Prog = *Parsed.Prog;
  DiagnosticEngine Diags(Parsed.Source.get());
  // Compiles in place: afterwards Prog is the program the plan lowers.
  llvm::Expected<plan::Plan> Plan = compileProgram(Prog, {}, Diags, llvm::nulls());
  ASSERT_TRUE(bool(Plan)) << llvm::toString(Plan.takeError());

  for (llvm::StringRef Link : {"h100-nvlink", "ib-ndr"}) {
    SimOptions Opts;
    Opts.Link = llvm::cantFail(findLinkClass(Link));
    Opts.RecordEvents = true;
    llvm::Expected<SimResult> FromProgram = simulateStep(Prog, Opts);
    ASSERT_TRUE(bool(FromProgram)) << llvm::toString(FromProgram.takeError());
    llvm::Expected<SimResult> FromPlan = simulatePlan(*Plan, Opts);
    ASSERT_TRUE(bool(FromPlan)) << llvm::toString(FromPlan.takeError());

    EXPECT_GT(FromProgram->StepUs, FromProgram->ComputeOnlyStepUs) << Link.str();
    EXPECT_EQ(FromProgram->StepUs, FromPlan->StepUs) << Link.str();
    EXPECT_EQ(FromProgram->ComputeOnlyStepUs, FromPlan->ComputeOnlyStepUs);
    EXPECT_EQ(FromProgram->ExposedCommUs, FromPlan->ExposedCommUs);
    EXPECT_EQ(FromProgram->CommBusyUs, FromPlan->CommBusyUs);
    EXPECT_EQ(FromProgram->SlowestRank, FromPlan->SlowestRank);

    // The same timeline: each event at the same time, on the same rank and
    // stream, for the same compute (by name) or the same kind of comm.
    ASSERT_EQ(FromProgram->Events.size(), FromPlan->Events.size());
    for (size_t I = 0; I != FromPlan->Events.size(); ++I) {
      const SimEvent &A = FromProgram->Events[I], &B = FromPlan->Events[I];
      ASSERT_EQ(A.Rank, B.Rank) << "event " << I;
      ASSERT_EQ(A.IsComm, B.IsComm) << "event " << I;
      ASSERT_EQ(A.Stream, B.Stream) << "event " << I;
      ASSERT_EQ(A.StartUs, B.StartUs) << "event " << I;
      ASSERT_EQ(A.DurUs, B.DurUs) << "event " << I;
      const Op &O = Prog.ops()[A.Source];
      if (A.IsComm)
        ASSERT_EQ(opKindName(O.Kind), plan::commKindName(Plan->Comms[B.Source].Kind));
      else
        ASSERT_EQ(O.Callee, Plan->Computes[B.Source].Name) << "event " << I;
    }
  }
}

class ProgramAndPlan : public ::testing::TestWithParam<const char *> {};

TEST_P(ProgramAndPlan, SameStep) {
  std::string Path = std::string(COLLC_EXAMPLES_DIR) + "/" + GetParam() + ".coll";
  llvm::Expected<ParsedProgram> Parsed = parseProgramFile(Path);
  ASSERT_TRUE(bool(Parsed)) << llvm::toString(Parsed.takeError());
  expectSameStep(*Parsed);
}

// Runtime split sizes that are ready long after the data: the all_to_all_v
// waits for them in the plan as in the program (the plan keeps them apart
// from the comm's inputs, as `counts`).
TEST(ProgramAndPlanSplits, LateSplitSizesHoldTheAllToAllV) {
  ParsedProgram Parsed = test::parseOK(R"(program @late_splits world(4) {
  group @ep = world
  %d = compute @route cost(10us) : bf16[4096, 1024]
  %cnt = compute @count cost(900us) stream(1) : i64[4]
  %e = all_to_all_v %d in @ep splits %cnt : bf16[4096, 1024]
  compute @expert(%e) cost(50us)
}
)");
  ASSERT_TRUE(Parsed.Prog);
  expectSameStep(Parsed);
}

// Posted point-to-point: the exchange (recv async before the send), a ring
// in a p2p block and an async send simulate without stalling, the same from
// the program as from its plan.
TEST(ProgramAndPlanP2P, PostedPointToPointDoesNotStall) {
  ParsedProgram Parsed = test::parseOK(R"(program @posted world(4) {
  %x = compute @make cost(20us) : f32[65536]
  %y = recv async from ((rank + 1) % world) : f32[65536]
  send %x to ((rank - 1) % world)
  wait %y
  p2p {
    send %y to ((rank + 1) % world)
    %z = recv from ((rank - 1) % world) : f32[65536]
  }
  %t = send async %z to ((rank + 1) % world)
  %w = recv from ((rank - 1) % world) : f32[65536]
  compute @use(%w) cost(30us)
  wait %t
}
)");
  ASSERT_TRUE(Parsed.Prog);
  expectSameStep(Parsed);
}

// A posted recv's value is used no sooner than it arrives, whichever rank
// the simulator walks first: rank 0 posts its recv at once, rank 1 sends
// only after 10 ms of compute, so rank 0's use starts after 10 ms.
TEST(ProgramAndPlanP2P, APostedRecvIsReadOnlyOnceItArrives) {
  ParsedProgram Parsed = test::parseOK(R"(program @late world(2) {
  %y = recv async from 1 : f32[16] when rank == 0
  wait %y when rank == 0
  compute @use(%y) cost(1ms) when rank == 0
  %x = compute @make cost(10ms) : f32[16] when rank == 1
  send %x to 0 when rank == 1
}
)");
  ASSERT_TRUE(Parsed.Prog);
  SimOptions Opts;
  Opts.Link = llvm::cantFail(findLinkClass("h100-nvlink"));
  llvm::Expected<SimResult> R = simulateStep(*Parsed.Prog, Opts);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_GE(R->StepUs, 11000.0);
  expectSameStep(Parsed);
}

INSTANTIATE_TEST_SUITE_P(Examples, ProgramAndPlan, ::testing::ValuesIn(Examples));

/// A link where a collective costs 10 us plus 1 us per 1000 bus bytes.
SimOptions testLink() {
  SimOptions Opts;
  Opts.Link = {"test", 10.0, 1.0, "for tests", nullptr};
  Opts.RecordEvents = true;
  return Opts;
}

SimTask computeTask(uint32_t Stream, int64_t CostNs, std::vector<uint32_t> In,
                    std::vector<uint32_t> Out) {
  SimTask T;
  T.Stream = Stream;
  T.CostNs = CostNs;
  T.Inputs.assign(In.begin(), In.end());
  T.Outputs.assign(Out.begin(), Out.end());
  return T;
}

// Two ranks: rank 1 computes longer, the all_reduce waits for it, a blocking
// all_reduce fences the next compute, an async one lets it overlap.
TEST(StepSimulatorCore, RendezvousFenceAndOverlap) {
  std::vector<std::vector<int32_t>> Subgroups = {{0, 1}};
  std::vector<int32_t> SubgroupOf = {0, 0};
  for (bool Async : {false, true}) {
    SimModel M;
    M.World = 2;
    M.NumValues = 2;
    M.Groups.push_back({Subgroups, SubgroupOf});
    SimTask Short = computeTask(0, 100000, {}, {0}); // 100 us, rank 0
    Short.Ranks.resize(2);
    Short.Ranks.set(0);
    SimTask Long = computeTask(0, 300000, {}, {0}); // 300 us, rank 1
    Long.Ranks.resize(2);
    Long.Ranks.set(1);
    SimTask AR;
    AR.Kind = OpKind::AllReduce;
    AR.Group = 0;
    AR.Async = Async;
    AR.Inputs = {0};
    AR.Outputs = {1};
    // Factor 2(n-1)/n = 1 on 2 ranks: 1000 us + 10 us.
    AR.InBytes = AR.OutBytes = 1000000;
    // Then 50 us on both ranks.
    M.Tasks = {Short, Long, AR, computeTask(0, 50000, {}, {})};
    std::optional<SimResult> R = simulateModel(M, testLink());
    ASSERT_TRUE(R.has_value());
    // The all_reduce starts when rank 1 is ready (300 us) and takes 1010 us.
    EXPECT_DOUBLE_EQ(R->StepUs, Async ? 1310.0 : 1360.0);
    EXPECT_DOUBLE_EQ(R->ComputeOnlyStepUs, 350.0);
    EXPECT_DOUBLE_EQ(R->ExposedCommUs, R->StepUs - 350.0);
    EXPECT_DOUBLE_EQ(R->CommBusyUs, 1010.0);
    // Rank 0's last compute: after the fence when blocking, right after its
    // first compute when async.
    double LastStart = -1;
    for (const SimEvent &E : R->Events)
      if (!E.IsComm && E.Rank == 0)
        LastStart = E.StartUs;
    EXPECT_DOUBLE_EQ(LastStart, Async ? 100.0 : 1310.0);
  }
}

// A send whose peer never posts the recv stalls: no result, not a hang.
TEST(StepSimulatorCore, UnmatchedSendStalls) {
  SimModel M;
  M.World = 2;
  SimTask Send;
  Send.Kind = OpKind::Send;
  Send.Ranks.resize(2);
  Send.Ranks.set(0);
  Send.Peers = {1, -1};
  M.Tasks = {Send};
  EXPECT_FALSE(simulateModel(M, testLink()).has_value());
}

} // namespace
