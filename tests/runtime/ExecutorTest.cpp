//===- tests/runtime/ExecutorTest.cpp - Bind, capture, replay --------------===//

#include "tests/runtime/LocalReplay.h"
#include "tests/runtime/RuntimeTestUtil.h"

#include "compiler/Compile.h"
#include "ir/Parser.h"
#include "runtime/local/LocalExecutor.h"
#include "runtime/verify/PlanChecker.h"
#include "runtime/verify/SyntheticData.h"

#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace collc;
using namespace collc::rt;
using namespace collc::test;
using llvm::Error;
using llvm::Expected;

namespace {

const char *TwoGradients = R"(program @two_gradients world(4) {
  group @dp = world
  %a = compute @layer_a : f32[1000]
  %b = compute @layer_b : bf16[77]
  %ra = all_reduce sum %a in @dp
  %rb = all_reduce avg %b in @dp
  compute @optimizer(%ra, %rb)
}
)";

plan::Plan compile(const char *Text) {
  Expected<plan::Plan> Plan = compileProgramText(Text, "", "test.coll");
  if (!Plan) {
    ADD_FAILURE() << llvm::toString(Plan.takeError());
    return {};
  }
  return std::move(*Plan);
}

TEST(ExecutorTest, ReplaysMatchTheReferenceEveryStep) {
  plan::Plan P = compile(TwoGradients);
  std::vector<const plan::Plan *> Plans(4, &P);
  std::vector<RankRun> Runs = runAll(Plans, 3, optionsFor("replay"));
  for (int R = 0; R != 4; ++R)
    ASSERT_EQ(Runs[R].Error, "") << "rank " << R;
  Expected<CheckSummary> S = check(P, Runs);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(S->TensorsChecked, 8u); // two results on four ranks
}

TEST(ExecutorTest, TheCheckerCatchesATamperedResult) {
  plan::Plan P = compile(TwoGradients);
  std::vector<const plan::Plan *> Plans(4, &P);
  std::vector<RankRun> Runs = runAll(Plans, 1, optionsFor("tamper"));
  for (int R = 0; R != 4; ++R)
    ASSERT_EQ(Runs[R].Error, "") << "rank " << R;
  Expected<llvm::MutableArrayRef<char>> Ra = Runs[2].X->tensor("ra");
  ASSERT_TRUE(bool(Ra)) << llvm::toString(Ra.takeError());
  (*Ra)[4 * 123] ^= 1; // one bit of element 123
  Expected<CheckSummary> S = check(P, Runs);
  ASSERT_FALSE(bool(S));
  std::string Text = llvm::toString(S.takeError());
  EXPECT_NE(Text.find("rank 2"), std::string::npos) << Text;
  EXPECT_NE(Text.find("%ra"), std::string::npos) << Text;
  EXPECT_NE(Text.find("123"), std::string::npos) << Text;
}

// Rank 2 posts its recv before the collective that makes what rank 0 sends
// to rank 1, which forwards it: in step order the recv comes first, so the
// reference must follow the values, not the steps.
const char *Relay = R"(program @relay world(3) {
  group @all = world
  %x = compute @make : f32[64]
  %z = recv async from 1 : f32[64] when rank == 2
  %y = all_reduce sum %x in @all
  send %y to 1 when rank == 0
  %m = recv from 0 : f32[64] when rank == 1
  send %m to 2 when rank == 1
  wait %z when rank == 2
  compute @use(%z) when rank == 2
}
)";

uint32_t tensorNamed(const plan::Plan &P, llvm::StringRef Name) {
  for (uint32_t I = 0; I != P.Tensors.size(); ++I)
    if (P.Tensors[I].Name == Name)
      return I;
  ADD_FAILURE() << "no tensor %" << Name.str();
  return 0;
}

TEST(ExecutorTest, TheCheckerFollowsValuesNotSteps) {
  plan::Plan P = compile(Relay);
  std::vector<const plan::Plan *> Plans(3, &P);
  std::vector<RankRun> Runs = runAll(Plans, 2, optionsFor("relay"));
  for (int R = 0; R != 3; ++R)
    ASSERT_EQ(Runs[R].Error, "") << "rank " << R;
  Expected<CheckSummary> S = check(P, Runs);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_EQ(S->TensorsChecked, 5u); // %y on three ranks, %m, %z
  // The forwarded value is the reduced one, not the synthetic pattern.
  Expected<llvm::MutableArrayRef<char>> Z = Runs[2].X->tensor("z");
  ASSERT_TRUE(bool(Z)) << llvm::toString(Z.takeError());
  (*Z)[4 * 7] ^= 1;
  S = check(P, Runs);
  ASSERT_FALSE(bool(S));
  std::string Text = llvm::toString(S.takeError());
  EXPECT_NE(Text.find("rank 2: %z differs at element 7"), std::string::npos) << Text;
}

TEST(ExecutorTest, TheCheckerRefusesValuesNothingMakes) {
  auto Nothing = [](int64_t, uint32_t) { return llvm::ArrayRef<char>(); };
  // Rank 0 sends %m, which only rank 1 receives: nothing makes it on rank 0.
  plan::Plan P = compile(Relay);
  for (plan::Comm &C : P.Comms)
    if (C.Kind == plan::CommKind::Send && C.Ranks.contains(0))
      C.Inputs = {tensorNamed(P, "m")};
  Expected<CheckSummary> S = checkPlanResults(P, Nothing);
  ASSERT_FALSE(bool(S));
  std::string Text = llvm::toString(S.takeError());
  EXPECT_NE(Text.find("the recv of %m on rank 1 receives %m from rank 0, which no compute or "
                      "comm makes on rank 0"),
            std::string::npos)
      << Text;

  // Each rank forwards what it receives from the other: values that wait on
  // each other (the ranks would deadlock), refused, not looped on.
  plan::Plan Swap = compile(R"(program @swap world(2) {
  %x = compute @make : f32[64]
  %a = recv async from (1 - rank) : f32[64]
  send %x to (1 - rank)
  wait %a
  compute @use(%a)
}
)");
  for (plan::Comm &C : Swap.Comms)
    if (C.Kind == plan::CommKind::Send)
      C.Inputs = {tensorNamed(Swap, "a")};
  S = checkPlanResults(Swap, Nothing);
  ASSERT_FALSE(bool(S));
  Text = llvm::toString(S.takeError());
  EXPECT_NE(Text.find("the recv of %a on rank 0 reads %a of rank 1, which only comms that wait "
                      "for it make"),
            std::string::npos)
      << Text;
}

TEST(ExecutorTest, InAnyOrderTheCheckerAllowsTheBoundAndNoMore) {
  plan::Plan P = compile(TwoGradients);
  std::vector<const plan::Plan *> Plans(4, &P);
  std::vector<RankRun> Runs = runAll(Plans, 1, optionsFor("anyorder"));
  for (int R = 0; R != 4; ++R)
    ASSERT_EQ(Runs[R].Error, "") << "rank " << R;
  Expected<llvm::MutableArrayRef<char>> Ra = Runs[2].X->tensor("ra");
  ASSERT_TRUE(bool(Ra)) << llvm::toString(Ra.takeError());
  float *Elem = reinterpret_cast<float *>(Ra->data()) + 123;
  float Ref = *Elem;
  ASSERT_NE(Ref, 0.0f);
  CheckOptions AnyOrder;
  AnyOrder.Reductions.RankOrdered = false;

  *Elem = std::nextafter(Ref, INFINITY); // as a sum in another order may be
  Expected<CheckSummary> Exact = check(P, Runs);
  ASSERT_FALSE(bool(Exact));
  std::string Text = llvm::toString(Exact.takeError());
  EXPECT_NE(Text.find("element 123"), std::string::npos) << Text;
  EXPECT_NE(Text.find("allowed: bit-exact"), std::string::npos) << Text;
  Expected<CheckSummary> Any = check(P, Runs, AnyOrder);
  EXPECT_TRUE(bool(Any)) << llvm::toString(Any.takeError());

  *Elem = Ref * 1.01f; // no order gives this
  Any = check(P, Runs, AnyOrder);
  ASSERT_FALSE(bool(Any));
  Text = llvm::toString(Any.takeError());
  for (const char *Part :
       {"rank 2", "%ra", "element 123", "got ", "expected ", "allowed: |got - expected| <= "})
    EXPECT_NE(Text.find(Part), std::string::npos) << Part << " missing from: " << Text;
}

TEST(ExecutorTest, DigestMismatchRefusesToRunAndNamesTheRanks) {
  plan::Plan P = compile(TwoGradients);
  plan::Plan Other = P;
  Other.Digest = "xxh64:0123456789abcdef"; // rank 3 loaded another plan
  std::vector<const plan::Plan *> Plans = {&P, &P, &P, &Other};
  std::vector<RankRun> Runs = runAll(Plans, 1, optionsFor("digest"));
  for (int R = 0; R != 4; ++R) {
    SCOPED_TRACE("rank " + std::to_string(R));
    EXPECT_NE(Runs[R].Error.find("digest"), std::string::npos) << Runs[R].Error;
    EXPECT_NE(Runs[R].Error.find("3"), std::string::npos) << Runs[R].Error;
  }
}

TEST(ExecutorTest, BindingErrorsNameTheTensor) {
  plan::Plan P = compile(TwoGradients);
  Expected<std::unique_ptr<Executor>> X = createLocalExecutor(P, 0, optionsFor("bind"));
  ASSERT_TRUE(bool(X)) << llvm::toString(X.takeError());
  std::vector<char> Mem(8192);
  ErrorFacts Unknown = factsOf((*X)->bind("nope", Mem.data(), Mem.size()));
  EXPECT_TRUE(Unknown.Failed);
  EXPECT_NE(Unknown.Text.find("nope"), std::string::npos) << Unknown.Text;
  for (const std::string &Name : (*X)->unboundTensors()) {
    ErrorFacts Wrong = factsOf((*X)->bind(Name, Mem.data(), 3));
    EXPECT_TRUE(Wrong.Failed) << Name;
    EXPECT_NE(Wrong.Text.find(Name), std::string::npos) << Wrong.Text;
    EXPECT_NE(Wrong.Text.find("3"), std::string::npos) << Wrong.Text;
  }
  // Capture without binding what is not a view: refused, naming it.
  std::vector<std::string> Missing = (*X)->unboundTensors();
  if (!Missing.empty()) {
    ErrorFacts Capture = factsOf((*X)->capture());
    EXPECT_TRUE(Capture.Failed);
    EXPECT_NE(Capture.Text.find(Missing.front()), std::string::npos) << Capture.Text;
  }
  EXPECT_TRUE(factsOf((*X)->bind("ra", nullptr, 4000)).Failed) << "null memory";
}

TEST(ExecutorTest, ABufferTheHostCannotAllocateIsRefusedNamingIt) {
  // Two all_reduces of 128 TiB each, fused into one 256 TiB buffer: more
  // than any host has (the CLI's --memory-budget refuses such a plan
  // first; an executor made through the API meets it here).
  const char *Huge = R"(program @huge world(1) {
  group @dp = world
  %a = compute @a : f32[35184372088832]
  %ra = all_reduce sum %a in @dp
  %b = compute @b : f32[35184372088832]
  %rb = all_reduce sum %b in @dp
  compute @use(%ra, %rb)
}
)";
  Expected<plan::Plan> P = compileProgramText(
      Huge, "verify,order,fuse{max-bytes=281474976710656},order,schedule,plan-memory", "huge.coll");
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  ASSERT_EQ(P->Buffers.size(), 1u);
  Expected<std::unique_ptr<Executor>> X = createLocalExecutor(*P, 0, optionsFor("huge"));
  ASSERT_FALSE(bool(X));
  std::string Text = llvm::toString(X.takeError());
  EXPECT_NE(Text.find("buffer #0"), std::string::npos) << Text;
  EXPECT_NE(Text.find("281474976710656 bytes"), std::string::npos) << Text;
}

TEST(ExecutorTest, AnExecutorForARankOutsideThePlanIsRefused) {
  plan::Plan P = compile(TwoGradients);
  Expected<std::unique_ptr<Executor>> X = createLocalExecutor(P, 4, optionsFor("outside"));
  ASSERT_FALSE(bool(X));
  std::string Text = llvm::toString(X.takeError());
  EXPECT_NE(Text.find("4"), std::string::npos) << Text;
}

const char *OneBucket = R"(program @one_bucket world(4) {
  group @dp = world
  %a = compute @layer_a : f32[1000]
  %b = compute @layer_b : f32[77]
  %ra = all_reduce sum %a in @dp
  %rb = all_reduce sum %b in @dp
  compute @optimizer(%ra, %rb)
}
)";

TEST(ExecutorTest, BucketsLaunchAfterTheirLastInputAndConsumersWaitForThem) {
  plan::Plan P = compile(OneBucket);
  ASSERT_EQ(P.Comms.size(), 1u) << "the two gradients share one bucket";
  ExecutorOptions Opts = optionsFor("fences");
  Opts.Trace = true;
  std::vector<const plan::Plan *> Plans(4, &P);
  std::vector<RankRun> Runs = runAll(Plans, 1, Opts);
  for (int R = 0; R != 4; ++R)
    ASSERT_EQ(Runs[R].Error, "") << "rank " << R;
  // On every rank: each launch comes after the compute of each of its
  // inputs, and the consumer's compute after the wait of each collective.
  for (int R = 0; R != 4; ++R) {
    const std::vector<TraceEvent> &T = Runs[R].X->trace();
    auto IndexOf = [&](llvm::StringRef Category, llvm::StringRef NamePart) -> int {
      for (size_t I = 0; I != T.size(); ++I)
        if (Category == T[I].Category && llvm::StringRef(T[I].Name).contains(NamePart))
          return int(I);
      return -1;
    };
    int LayerA = IndexOf("compute", "layer_a"), LayerB = IndexOf("compute", "layer_b");
    int Launch = IndexOf("launch", ""), Wait = IndexOf("wait", "");
    int Optimizer = IndexOf("compute", "optimizer");
    ASSERT_TRUE(LayerA >= 0 && LayerB >= 0 && Launch >= 0 && Wait >= 0 && Optimizer >= 0);
    EXPECT_LT(std::max(LayerA, LayerB), Launch) << "rank " << R;
    EXPECT_LT(Launch, Wait);
    EXPECT_LT(Wait, Optimizer);
    EXPECT_GE(T[Optimizer].StartUs, T[Wait].StartUs + T[Wait].DurUs);
  }
}

} // namespace
