// The execution core every backend's executor shares (runtime/exec/):
// binding by name and its checks, the split-size reader and the
// all_to_all_v matrix checks. Both the local and the NCCL executor call
// these, so what is refused here is refused on every backend alike.
#include "RuntimeTestUtil.h"

#include "compiler/Compile.h"
#include "runtime/exec/SplitSizes.h"
#include "runtime/exec/StepWalk.h"
#include "runtime/exec/TensorBindings.h"

#include "gtest/gtest.h"

#include <cstring>
#include <limits>

using namespace collc;
using namespace collc::test;

namespace {

const char *TwoRanks = R"(program @bind world(2) {
  group @dp = world
  group @one = ranks [1]
  %a, %b = compute @bwd : f32[4], f32[8]
  %ra = all_reduce sum %a in @dp
  %rb = all_reduce sum %b in @one
  compute @use(%ra)
  compute @use1(%rb) when rank == 1
}
)";

plan::Plan compilePlan(const char *Text) {
  llvm::Expected<plan::Plan> P = compileProgramText(Text, "verify", "bind.coll");
  EXPECT_TRUE(bool(P)) << (P ? "" : llvm::toString(P.takeError()));
  return P ? std::move(*P) : plan::Plan();
}

TEST(ExecCore, BindingChecksInOneOrder) {
  plan::Plan P = compilePlan(TwoRanks);
  rt::TensorBindings B(P, 0);
  // Rank 0 runs only %a's all_reduce: %b and %rb need no memory there.
  EXPECT_EQ(B.unbound(), (std::vector<std::string>{"a", "ra"}));
  ErrorFacts Unknown = factsOf(B.bind("nope", nullptr, 0));
  EXPECT_NE(Unknown.Text.find("plan @bind has no tensor %nope"), std::string::npos)
      << Unknown.Text;
  std::vector<char> Mem(16);
  ErrorFacts Size = factsOf(B.bind("a", Mem.data(), 3));
  EXPECT_NE(Size.Text.find("%a is f32[4] (16 bytes); 3 bytes were bound"), std::string::npos)
      << Size.Text;
  ErrorFacts Null = factsOf(B.bind("a", nullptr, 16));
  EXPECT_NE(Null.Text.find("%a was bound to null"), std::string::npos) << Null.Text;
  ErrorFacts Two = factsOf(B.checkBindings("capture"));
  EXPECT_NE(Two.Text.find("rank 0 cannot capture plan @bind: 2 tensors are not bound: %a, %ra"),
            std::string::npos)
      << Two.Text;
  // The IR's sigil may be given, in bindings and in errors alike.
  ErrorFacts Sigil = factsOf(B.bind("%nope", nullptr, 0));
  EXPECT_NE(Sigil.Text.find("plan @bind has no tensor %nope"), std::string::npos) << Sigil.Text;
  EXPECT_EQ(Sigil.Text.find("%%"), std::string::npos) << Sigil.Text;
  ErrorFacts SigilSize = factsOf(B.bind("%a", Mem.data(), 3));
  EXPECT_EQ(SigilSize.Text, "%a is f32[4] (16 bytes); 3 bytes were bound");
  ErrorFacts Twice = factsOf(B.bind("%%a", Mem.data(), 16));
  EXPECT_NE(Twice.Text.find("has no tensor %%a"), std::string::npos) << Twice.Text;
  ASSERT_FALSE(bool(B.bind("%a", Mem.data(), 16)));
  ASSERT_FALSE(bool(B.bind("a", Mem.data(), 16)));
  ErrorFacts One = factsOf(B.checkBindings("run"));
  EXPECT_NE(One.Text.find("1 tensor is not bound: %ra"), std::string::npos) << One.Text;
  // A view is placed by the executor, and cannot be bound over.
  B.setView(2, Mem.data()); // %ra: tensors are numbered in definition order
  ErrorFacts View = factsOf(B.bind("ra", Mem.data(), 16));
  EXPECT_NE(View.Text.find("%ra is a zero-copy view of a plan buffer"), std::string::npos)
      << View.Text;
  EXPECT_FALSE(bool(B.checkBindings("run")));
  llvm::Expected<char *> Home = B.lookup("ra");
  ASSERT_TRUE(bool(Home));
  EXPECT_EQ(*Home, Mem.data());
  llvm::Expected<char *> SigilHome = B.lookup("%ra");
  ASSERT_TRUE(bool(SigilHome));
  EXPECT_EQ(*SigilHome, Mem.data());
}

/// Tensors bound so that they overlap without being the same memory gave
/// silently wrong sums (%g = buf[:N], %r = buf[1:N+1] on 2 local ranks:
/// 2046 of 65536 elements wrong). They are refused, naming both; the same
/// memory (in place) and memory side by side are not.
TEST(ExecCore, BindingsThatPartlyOverlapAreRefusedNamingBoth) {
  plan::Plan P = compilePlan(TwoRanks);
  rt::TensorBindings B(P, 0);
  std::vector<float> Buf(8);
  ASSERT_FALSE(bool(B.bind("a", Buf.data(), 16)));
  ASSERT_FALSE(bool(B.bind("ra", Buf.data() + 1, 16)));
  ErrorFacts Partly = factsOf(B.checkBindings("capture"));
  EXPECT_NE(Partly.Text.find("rank 0 cannot capture plan @bind: %a (16 bytes) and %ra (16 bytes) "
                             "overlap: %ra starts 4 bytes into %a"),
            std::string::npos)
      << Partly.Text;
  EXPECT_NE(Partly.Text.find("expected memory of its own for each, or the same memory for both "
                             "(in place)"),
            std::string::npos)
      << Partly.Text;
  // The earlier in memory is named first, whichever tensor it is.
  ASSERT_FALSE(bool(B.bind("ra", Buf.data(), 16)));
  ASSERT_FALSE(bool(B.bind("a", Buf.data() + 2, 16)));
  ErrorFacts Swapped = factsOf(B.checkBindings("run"));
  EXPECT_NE(Swapped.Text.find("rank 0 cannot run plan @bind: %ra (16 bytes) and %a (16 bytes) "
                              "overlap: %a starts 8 bytes into %ra"),
            std::string::npos)
      << Swapped.Text;
  // In place, and side by side, are right.
  ASSERT_FALSE(bool(B.bind("a", Buf.data(), 16)));
  EXPECT_FALSE(bool(B.checkBindings("capture")));
  ASSERT_FALSE(bool(B.bind("a", Buf.data() + 4, 16)));
  EXPECT_FALSE(bool(B.checkBindings("capture")));
  // %b is not touched on rank 0 (only rank 1 reduces it): what it shares
  // with %ra is the model's business, not a comm's.
  ASSERT_FALSE(bool(B.bind("b", Buf.data(), 32)));
  EXPECT_FALSE(bool(B.checkBindings("capture")));
}

TEST(ExecCore, EveryRankWalksTheStepsInPlanOrder) {
  plan::Plan P = compilePlan(TwoRanks);
  std::vector<size_t> R0 = rt::stepsOfRank(P, 0), R1 = rt::stepsOfRank(P, 1);
  EXPECT_TRUE(std::is_sorted(R0.begin(), R0.end()));
  EXPECT_EQ(R1.size(), P.Steps.size());
  EXPECT_EQ(R0.size() + 3, R1.size()) << "rank 0 skips %rb's launch and wait, and @use1";
}

TEST(ExecCore, SplitSizesAreReadAsIntegersOnly) {
  uint64_t Big = uint64_t(1) << 63;
  int32_t Small[] = {3, -2};
  EXPECT_EQ(*rt::readSplitSize(ElemType::I32, reinterpret_cast<const char *>(Small), 1), -2);
  ErrorFacts Huge = factsOf(
      rt::readSplitSize(ElemType::U64, reinterpret_cast<const char *>(&Big), 0).takeError());
  EXPECT_NE(Huge.Text.find("9223372036854775808 (entry 0) is beyond"), std::string::npos)
      << Huge.Text;
  float F = 1;
  EXPECT_TRUE(
      factsOf(rt::readSplitSize(ElemType::F32, reinterpret_cast<const char *>(&F), 0).takeError())
          .Failed);
}

TEST(ExecCore, SplitMatrixRowsAndRefusals) {
  // [sender][receiver] over 3 ranks; inputs of 6 rows, capacity 6.
  std::vector<int64_t> M = {1, 2, 3, 0, 4, 0, 2, 0, 1};
  llvm::Expected<rt::SplitRows> Rows = rt::checkSplitMatrix(7, M, 3, 1, 6, 6);
  ASSERT_TRUE(bool(Rows)) << llvm::toString(Rows.takeError());
  EXPECT_EQ(Rows->Send, (std::vector<uint64_t>{0, 4, 0}));
  EXPECT_EQ(Rows->Recv, (std::vector<uint64_t>{2, 4, 0}));

  std::vector<int64_t> Negative = M;
  Negative[5] = -1;
  ErrorFacts Neg = factsOf(rt::checkSplitMatrix(7, Negative, 3, 0, 6, 6).takeError());
  EXPECT_NE(Neg.Text.find("comm #7: rank 1 of the group would send -1 rows to rank 2"),
            std::string::npos)
      << Neg.Text;
  EXPECT_EQ(Neg.Peer, 1);

  ErrorFacts Capacity = factsOf(rt::checkSplitMatrix(7, M, 3, 0, 6, 5).takeError());
  EXPECT_NE(Capacity.Text.find("rank 1 of the group receives 6 rows, more than its capacity of 5"),
            std::string::npos)
      << Capacity.Text;

  // Entries near 2^62 whose row sums wrap int64: refused, not wrapped into
  // a small or negative total that would pass.
  int64_t Q = int64_t(1) << 62;
  std::vector<int64_t> Wrap = {Q, Q, Q, Q};
  ErrorFacts Over = factsOf(rt::checkSplitMatrix(1, Wrap, 2, 0, 1000, 1000).takeError());
  EXPECT_NE(Over.Text.find("rank 0 of the group sends 9223372036854775807 rows, more than its "
                           "input of 1000"),
            std::string::npos)
      << Over.Text;

  ErrorFacts Short = factsOf(rt::checkSplitMatrix(2, {1, 2, 3}, 2, 0, 9, 9).takeError());
  EXPECT_NE(Short.Text.find("3 split sizes for rank 0 of a group of 2; expected 2 x 2"),
            std::string::npos)
      << Short.Text;
}

} // namespace

TEST(ExecCore, RuntimeErrorsEscapeWhatPeersAndStoresSaid) {
  // A message quotes peers, stores and libraries: terminal escapes reached
  // stderr as they were, and a NUL cut the message. Lines and tabs stay.
  using namespace std::string_literals;
  llvm::Error E = rt::makeError(rt::ErrorKind::Backend,
                                "store said \x1b]0;owned\x07\x1b[2J\0after\x80\n\tnext"s, 2);
  std::string Text, Expected = "store said \\x1b]0;owned\\x07\\x1b[2J\\x00after\\x80\n\tnext";
  int64_t Peer = -1;
  llvm::handleAllErrors(std::move(E), [&](const rt::RuntimeError &R) {
    Text = R.message();
    Peer = R.peer();
  });
  EXPECT_EQ(Text, Expected);
  EXPECT_EQ(Peer, 2);
}
