// The plan validator: each check, on a real compiled plan with one field
// edited (as a resealed file would say it), refused with its message. The
// lit test tests/lit/plan/hostile.test does the same through the text, run
// and dump.
#include "TestUtil.h"

#include "plan/PlanValidator.h"

#include <functional>

using namespace collc;
using plan::CommKind;

namespace {

// One of each thing the checks look at (tests/lit/plan/Inputs/hostile.coll,
// plus a fused bucket and a broadcast).
const char *Program = R"(program @v world(4) {
  group @dp = world
  group @tp = split(rank / 2, rank)
  %a, %b = compute @make cost(10us) : f32[64], f32[32]
  %h = compute @rows cost(10us) : f32[8, 2]
  %c = compute @counts cost(1us) : i64[4]
  %ra, %rb = all_reduce sum %a, %b in @dp
  %g = all_gather %a in @tp
  %bc = broadcast %a root 1 in @tp
  send %a to (rank + 1) when rank < 3
  %v = recv from (rank - 1) : f32[64] when rank > 0
  %w = all_to_all_v %h in @dp splits [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]] : f32[8, 2]
  %u = all_to_all_v %h in @dp splits %c : f32[8, 2]
  compute @use(%ra, %rb, %g, %bc, %w, %u)
  compute @take(%v) when rank > 0
}
)";

plan::Plan compiled() { return test::compileOK(Program, "", "v.coll"); }

plan::Comm &commOf(plan::Plan &P, CommKind K, bool Counts = false) {
  for (plan::Comm &C : P.Comms)
    if (C.Kind == K && (K != CommKind::AllToAllV || (C.Counts >= 0) == Counts))
      return C;
  ADD_FAILURE() << "no " << plan::commKindName(K).str();
  return P.Comms.front();
}

uint32_t tensorNamed(const plan::Plan &P, llvm::StringRef Name) {
  for (size_t I = 0; I != P.Tensors.size(); ++I)
    if (P.Tensors[I].Name == Name)
      return I;
  ADD_FAILURE() << "no tensor %" << Name.str();
  return 0;
}

/// The error of validating the compiled plan after \p Edit, or "".
std::string errorAfter(const std::function<void(plan::Plan &)> &Edit) {
  plan::Plan P = compiled();
  Edit(P);
  P.finalize();
  llvm::Error E = plan::validatePlan(P, "t.plan");
  return E ? llvm::toString(std::move(E)) : "";
}

/// The message names the check; a failure shows it and what came instead.
void expectRefused(const std::function<void(plan::Plan &)> &Edit, const std::string &Text) {
  std::string Err = errorAfter(Edit);
  EXPECT_NE(Err.find(Text), std::string::npos) << "expected '" << Text << "', got '" << Err << "'";
}

} // namespace

TEST(PlanValidator, AcceptsEveryExampleAndTheTestProgram) {
  plan::Plan P = compiled();
  llvm::Error E = plan::validatePlan(P, "t.plan");
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  // The examples are validated by lowering (and by PlanFile's read back).
}

TEST(PlanValidator, Header) {
  expectRefused([](plan::Plan &P) { P.Alignment = 24; },
                 "t.plan: program @v: alignment 24: expected a power of two in 1..1048576");
  expectRefused([](plan::Plan &P) { P.Alignment = uint64_t(1) << 40; },
                 "alignment 1099511627776: expected a power of two in 1..1048576");
}

TEST(PlanValidator, Groups) {
  expectRefused([](plan::Plan &P) { P.Groups[1].Subgroups[1].push_back(9); },
                 "group @tp: rank 9 is not in 0..3");
  expectRefused([](plan::Plan &P) { P.Groups[1].Subgroups[1].push_back(0); },
                 "group @tp: rank 0 is in subgroups 0 and 1; subgroups must be disjoint");
  expectRefused([](plan::Plan &P) { P.Groups[1].Subgroups.push_back({}); },
                 "group @tp: subgroup 2 is empty");
  // A collective on a group that lacks a rank issuing it (SIGFPE before).
  expectRefused([](plan::Plan &P) { P.Groups[1].Subgroups.pop_back(); },
                 "comm 0 (all_gather): rank 2 issues it, but is not a member of group @tp");
}

TEST(PlanValidator, TensorSizesAreChecked) {
  expectRefused(
      [](plan::Plan &P) { P.Tensors[0].Type.Shape = {int64_t(1) << 40, int64_t(1) << 40}; },
      "tensor 0 %a: f32[1099511627776, 1099511627776] has more than 2^63-1 elements");
  expectRefused([](plan::Plan &P) { P.Tensors[0].Type.Shape = {int64_t(1) << 62}; },
                 "tensor 0 %a: dimension 4611686018427387904 is not in 0..2^48");
  expectRefused([](plan::Plan &P) { P.Tensors[0].Type.Shape = {int64_t(1) << 31, 1 << 30}; },
                 "tensor 0 %a: f32[2147483648, 1073741824] has more than 2^63-1 bytes");
}

/// premul_sum's factor is a value of the comm's element type
/// (ir/PremulFactor.h): a plan edited to scale f32 by 1e39 (past its
/// largest) or by 1e-50 (below its smallest) is refused, naming the factor.
TEST(PlanValidator, APremulFactorIsAValueOfTheElementType) {
  auto Scaled = [](double Scale) {
    return [=](plan::Plan &P) {
      plan::Comm &C = commOf(P, CommKind::AllReduce);
      C.Reduce = ReduceOp::PremulSum;
      C.Scale = Scale;
    };
  };
  EXPECT_EQ(errorAfter(Scaled(0.3)), "");
  expectRefused(Scaled(1e39), "(all_reduce): premul_sum(1e+39) over f32: the factor is a "
                              "value of the element type, whose largest is");
  expectRefused(Scaled(1e-50), "premul_sum(1e-50) over f32: the factor is a value of the element "
                               "type, in which it rounds to 0");
}

TEST(PlanValidator, BuffersAndSlots) {
  expectRefused([](plan::Plan &P) { P.Buffers[0].Slots[0].Tensor = 999; },
                 "buffer 0: slot of tensor 999: there are");
  expectRefused([](plan::Plan &P) { P.Buffers[0].Slots[0].Bytes += 4; },
                 "buffer 0: slot of %a has 260 bytes; the tensor has 256");
  expectRefused([](plan::Plan &P) { P.Buffers[0].Slots.back().Offset = ~uint64_t(0) - 8; },
                 "does not fit a segment of");
  expectRefused([](plan::Plan &P) { P.Buffers[0].Segments = 3; },
                 "buffer 0: 512 bytes do not split into 3 equal segments");
  expectRefused([](plan::Plan &P) { P.Buffers[0].Slots.pop_back(); },
                 "comm 2 (all_reduce): output tensor %rb has no slot in its output buffer 0");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllReduce).OutBuffer = -1; },
                 "comm 2 (all_reduce): inbuf 0 and outbuf -1: a fused comm has both");
}

TEST(PlanValidator, IndicesInRange) {
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllGather).Inputs = {77}; },
                 "comm 0 (all_gather): input tensor 77 is not in 0..");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllGather).Outputs = {77}; },
                 "output tensor 77 is not in 0..");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllGather).Group = 5; },
                 "comm 0 (all_gather): group 5 is not in 0..1");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllGather).Group = -1; },
                 "comm 0 (all_gather): a collective needs a group");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllGather).InBuffer = 9; },
                 "buffer 9 is not in -1..");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllToAllV, true).Counts = 99; },
                 "counts tensor 99 is not in 0..");
  expectRefused([](plan::Plan &P) { P.Computes[0].Outputs.push_back(99); },
                 "compute 0 @make: output tensor 99 is not in 0..");
  expectRefused([](plan::Plan &P) { P.Comms[0].Ranks = {false, {1, 7}}; },
                 "comm 0 (all_gather): rank 7 is not in 0..3");
  expectRefused([](plan::Plan &P) { P.Steps.back().Index = 99; }, "compute 99 is not in 0..");
  expectRefused([](plan::Plan &P) { P.Steps[1] = {plan::StepKind::Launch, 99}; },
                 "comm 99 is not in 0..");
}

// An edited plan whose collective leaves out a member of its subgroup would
// leave the others waiting for ever (NCCL); the validator names both ranks.
TEST(PlanValidator, CollectivesCoverTheirSubgroups) {
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllReduce).Ranks = {false, {0}}; },
                "(all_reduce): rank 0 issues it, but rank 1, a member of its subgroup of "
                "@dp, does not: a collective completes only when every member of its subgroup "
                "issues it");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllGather).Ranks = {false, {0, 1, 3}}; },
                "comm 0 (all_gather): rank 3 issues it, but rank 2, a member of its subgroup of "
                "@tp, does not");
  // One whole subgroup of @tp, without the other, is a collective there.
  EXPECT_EQ(errorAfter([](plan::Plan &P) { commOf(P, CommKind::AllGather).Ranks = {false, {2, 3}}; }),
            "");
}

TEST(PlanValidator, SendAndRecv) {
  // A send with no input tensor (SIGSEGV before).
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::Send).Inputs.clear(); },
                 "(send): has 0 input and 0 output tensors; a send sends exactly one");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::Recv).Outputs.push_back(0); },
                 "(recv): has 0 input and 2 output tensors; a recv recvs exactly one");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::Send).Peers[1] = 1; },
                 "(send): peer 1 of rank 1 is not a rank of 0..3 other than itself");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::Send).Peers[0] = 4; },
                 "peer 4 of rank 0 is not a rank of 0..3");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::Recv).Peers.pop_back(); },
                 "(recv): has 3 peers; expected one per rank of the world (4)");
  expectRefused(
      [](plan::Plan &P) {
        plan::Comm &C = commOf(P, CommKind::Send);
        C.Group = 1; // @tp: rank 1's peer 2 is in the other subgroup
      },
      "(send): peer 2 of rank 1 is not in its subgroup of @tp");
}

TEST(PlanValidator, AFencedCommIsAsync) {
  // The compiler fences only async gathers (bounded prefetch); a blocking
  // comm marked fenced by an edit is refused, naming the comm.
  auto Fence = [](bool Async) {
    return [Async](plan::Plan &P) {
      plan::Comm &C = commOf(P, CommKind::AllGather);
      C.Async = Async;
      C.Fenced = true;
    };
  };
  expectRefused(Fence(false), "t.plan: comm 0 (all_gather): is fenced, so it is async");
  // The scheduler made this gather async (waited for before its consumer):
  // fencing it is what the compiler does.
  EXPECT_EQ(errorAfter(Fence(true)), "");
}

TEST(PlanValidator, BroadcastRoots) {
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::Broadcast).Peers[2] = 2; },
                 "(broadcast): root 2 of rank 2 is not in 0..1, the local ranks of its subgroup "
                 "of @tp");
}

TEST(PlanValidator, DtypeIsTheTensors) {
  // f64 over f32 tensors ran and "verified" before.
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllGather).Elem = ElemType::F64; },
                 "comm 0 (all_gather): dtype f64, but tensor 0 %a is f32[64]");
}

TEST(PlanValidator, ShapesPerKind) {
  expectRefused(
      [](plan::Plan &P) { commOf(P, CommKind::AllGather).Outputs = {tensorNamed(P, "v")}; },
      "comm 0 (all_gather): its output has 256 bytes; expected group size times its input (512 "
      "of 256 bytes, group size 2)");
  expectRefused(
      [](plan::Plan &P) { commOf(P, CommKind::Broadcast).Outputs = {tensorNamed(P, "g")}; },
      "(broadcast): its output has 512 bytes; expected as many bytes as its input");
  expectRefused(
      [](plan::Plan &P) {
        plan::Comm &C = commOf(P, CommKind::AllGather);
        C.Inputs.push_back(C.Inputs[0]);
      },
      "comm 0 (all_gather): has 2 input and 1 output tensors and no buffers; expected one of "
      "each");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllToAllV).Outputs.clear(); },
                 "(all_to_all_v): has 1 inputs and 0 outputs");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::Send).Splits = {1}; },
                 "(send): only all_to_all_v takes split sizes");
}

TEST(PlanValidator, SplitSizes) {
  // A split list shorter than the group squared (read out of bounds before).
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllToAllV).Splits.resize(4); },
                 "(all_to_all_v): has 4 split sizes; its group has 4 ranks, so it needs 4 x 4 = "
                 "16");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllToAllV).Splits[5] = -1; },
                 "split size -1 (row 1, column 1) is negative");
  expectRefused([](plan::Plan &P) { commOf(P, CommKind::AllToAllV).Splits[6] = 6; },
                 "local rank 1 sends 9 rows in all, more than the 8 of its input");
  // Sums that overflow int64 are reported, not wrapped.
  expectRefused(
      [](plan::Plan &P) {
        for (int64_t &S : commOf(P, CommKind::AllToAllV).Splits)
          S = int64_t(1) << 62;
      },
      "local rank 0 sends over 2^63-1 rows in all, more than the 8 of its input");
  expectRefused(
      [](plan::Plan &P) {
        std::vector<int64_t> &S = commOf(P, CommKind::AllToAllV).Splits;
        // Rows still send 4 each; column 0 now receives 3+3+3+1.
        S[0] = 3, S[1] = 0, S[4] = 3, S[5] = 0, S[8] = 3, S[9] = 0;
      },
      "local rank 0 receives 10 rows in all, more than the 8 of its output");
}

TEST(PlanValidator, CountsTensor) {
  // A counts tensor shorter than the group (read out of bounds before).
  expectRefused([](plan::Plan &P) { P.Tensors[tensorNamed(P, "c")].Type.Shape = {2}; },
                 "(all_to_all_v): counts tensor %c is i64[2]; expected at least 4 entries, one per "
                 "rank of its group");
  expectRefused([](plan::Plan &P) { P.Tensors[tensorNamed(P, "c")].Type.Elem = ElemType::F32; },
                 "counts tensor %c is f32[4]; expected an integer type");
}

TEST(PlanValidator, Steps) {
  auto Find = [](plan::Plan &P, plan::StepKind K) {
    for (size_t I = 0; I != P.Steps.size(); ++I)
      if (P.Steps[I].Kind == K)
        return I;
    ADD_FAILURE();
    return size_t(0);
  };
  expectRefused([&](plan::Plan &P) { P.Steps.erase(P.Steps.begin() + Find(P, plan::StepKind::Wait)); },
                 "it is launched but never waited for");
  expectRefused(
      [&](plan::Plan &P) { P.Steps.erase(P.Steps.begin() + Find(P, plan::StepKind::Launch)); },
      "waits for its comm before it is launched");
  expectRefused(
      [&](plan::Plan &P) { P.Steps.push_back(P.Steps[Find(P, plan::StepKind::Launch)]); },
      "launches its comm a second time");
  expectRefused([](plan::Plan &P) { P.Steps.push_back(P.Steps.front()); },
                 "runs its compute a second time");
  // The last step is a compute whose outputs nothing reads.
  expectRefused([](plan::Plan &P) { P.Steps.pop_back(); }, ": no step runs it");
  // Dataflow: a compute moved to the end leaves its readers before it; a
  // wait moved to the end leaves the comm's readers reading its results
  // while they are written.
  expectRefused(
      [](plan::Plan &P) { std::rotate(P.Steps.begin(), P.Steps.begin() + 1, P.Steps.end()); },
      "reads %a before it is produced (by compute 0 @make)");
  expectRefused(
      [](plan::Plan &P) {
        uint32_t Reduce = uint32_t(&commOf(P, CommKind::AllReduce) - P.Comms.data());
        auto W = llvm::find_if(P.Steps, [&](const plan::Step &S) {
          return S.Kind == plan::StepKind::Wait && S.Index == Reduce;
        });
        ASSERT_NE(W, P.Steps.end());
        std::rotate(W, W + 1, P.Steps.end());
      },
      "compute @use reads %ra before it is produced (by comm ");
  // An all_to_all_v reads its counts tensor at its launch.
  expectRefused(
      [](plan::Plan &P) {
        auto Counts = llvm::find_if(P.Steps, [&](const plan::Step &S) {
          return S.Kind == plan::StepKind::Compute && P.Computes[S.Index].Name == "counts";
        });
        ASSERT_NE(Counts, P.Steps.end());
        std::rotate(Counts, Counts + 1, P.Steps.end());
      },
      "its comm reads %c before it is produced (by compute ");
}

/// Two inputs (or two outputs) of one comm may not share bytes of its bucket
/// buffer; an input and an output may (in place).
TEST(PlanValidator, SlotsOfOneRoleDoNotOverlap) {
  expectRefused(
      [](plan::Plan &P) {
        plan::Comm &C = commOf(P, CommKind::AllReduce);
        ASSERT_GE(C.OutBuffer, 0);
        for (plan::Slot &S : P.Buffers[C.OutBuffer].Slots)
          if (S.Tensor == C.Outputs[1])
            S.Offset = 0;
      },
      "overlap in output buffer");
}
