// How the NCCL executor walks a lowering, checked without a GPU through a
// fake issuer: a failure inside an NCCL group always ends the group (NCCL's
// group depth is per thread; a group left open queues every later NCCL call
// of the thread), and one step issued as calls is the captured calls in the
// step's order.
#include "compiler/Compile.h"
#include "runtime/nccl/CallWalk.h"

#include <gtest/gtest.h>

using namespace collc;
using namespace collc::rt::nccl;

namespace {

bool isNccl(CallKind K) { return K >= CallKind::AllReduce && K <= CallKind::Recv; }

/// Two all_reduces of one tensor with different ops (one group), then
/// a static all_to_all_v (one group of a send and a receive per peer), on
/// two ranks.
const char *TwoGroups = R"(program @groups world(2) {
  group @dp = world
  %a = compute @a : f32[1024]
  %h = compute @h : bf16[64, 8]
  %ra = all_reduce async sum %a in @dp
  %rb = all_reduce async max %a in @dp
  wait %ra
  wait %rb
  %w = all_to_all_v %h in @dp splits [[16, 48], [48, 16]] : bf16[64, 8]
  compute @use(%ra, %rb, %w)
}
)";

/// A driver that fails its \p FailAt-th NCCL call and counts what it saw.
struct FakeIssuer {
  unsigned FailAt;
  unsigned NcclCalls = 0, Starts = 0, Ends = 0, AfterFailure = 0;
  int Depth = 0, MaxDepth = 0;
  bool Failed = false;

  llvm::Error operator()(const Call &C) {
    if (Failed && C.Kind != CallKind::GroupEnd)
      ++AfterFailure;
    switch (C.Kind) {
    case CallKind::GroupStart:
      ++Starts;
      MaxDepth = std::max(MaxDepth, ++Depth);
      return llvm::Error::success();
    case CallKind::GroupEnd:
      ++Ends;
      --Depth;
      return llvm::Error::success();
    default:
      break;
    }
    if (isNccl(C.Kind) && NcclCalls++ == FailAt) {
      Failed = true;
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "injected failure");
    }
    return llvm::Error::success();
  }
};

llvm::Expected<NcclRankPlan> lowerTwoGroups(int64_t Rank) {
  auto P = compileProgramText(TwoGroups);
  if (!P)
    return P.takeError();
  return lowerForRank(*P, Rank); // a lowering holds indices, not the plan
}

TEST(NcclCallWalk, TheProgramHasGroupsToFailIn) {
  auto L = lowerTwoGroups(0);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  FakeIssuer All{~0u};
  ASSERT_FALSE(bool(issueCalls(callsOf(L->Capture), std::ref(All))));
  EXPECT_EQ(All.Starts, 2u);
  EXPECT_EQ(All.Ends, 2u);
  EXPECT_EQ(All.NcclCalls, 6u) << "two all_reduces, two sends and two receives";
}

TEST(NcclCallWalk, AFailureInsideAGroupEndsTheGroup) {
  for (int64_t Rank : {0, 1}) {
    auto L = lowerTwoGroups(Rank);
    ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
    for (const std::vector<Call> *List : {&L->WarmUp, &L->Capture}) {
      for (unsigned FailAt = 0; FailAt != 6; ++FailAt) {
        FakeIssuer Fake{FailAt};
        llvm::Error E = issueCalls(callsOf(*List), std::ref(Fake));
        ASSERT_TRUE(bool(E)) << "call " << FailAt;
        EXPECT_EQ(llvm::toString(std::move(E)), "injected failure");
        EXPECT_EQ(Fake.Depth, 0) << "rank " << Rank << ", failing NCCL call " << FailAt
                                 << ": a group was left open";
        EXPECT_EQ(Fake.Starts, Fake.Ends);
        EXPECT_EQ(Fake.AfterFailure, 0u) << "nothing but group ends after a failure";
        EXPECT_EQ(Fake.NcclCalls, FailAt + 1);
      }
    }
  }
}

TEST(NcclCallWalk, AFailureOutsideAGroupEndsNothing) {
  auto L = lowerTwoGroups(0);
  ASSERT_TRUE(bool(L));
  unsigned Issued = 0, Ends = 0;
  llvm::Error E = issueCalls(callsOf(L->Capture), [&](const Call &C) -> llvm::Error {
    Ends += C.Kind == CallKind::GroupEnd;
    if (Issued++ == 0) // BeginCapture
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "no capture");
    return llvm::Error::success();
  });
  ASSERT_TRUE(bool(E));
  llvm::consumeError(std::move(E));
  EXPECT_EQ(Issued, 1u);
  EXPECT_EQ(Ends, 0u);
}

TEST(NcclCallWalk, AFailingGroupEndIsNotEndedTwice) {
  std::vector<Call> List = {{CallKind::GroupStart}, {CallKind::AllReduce}, {CallKind::GroupEnd}};
  unsigned Ends = 0;
  llvm::Error E = issueCalls(callsOf(List), [&](const Call &C) -> llvm::Error {
    if (C.Kind != CallKind::GroupEnd)
      return llvm::Error::success();
    ++Ends;
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "group failed");
  });
  ASSERT_TRUE(bool(E));
  llvm::consumeError(std::move(E));
  EXPECT_EQ(Ends, 1u);
}

TEST(NcclCallWalk, NestedGroupsAreAllEnded) {
  std::vector<Call> List = {{CallKind::GroupStart}, {CallKind::GroupStart}, {CallKind::Send},
                            {CallKind::GroupEnd},   {CallKind::GroupEnd}};
  FakeIssuer Fake{0};
  llvm::Error E = issueCalls(callsOf(List), std::ref(Fake));
  ASSERT_TRUE(bool(E));
  llvm::consumeError(std::move(E));
  EXPECT_EQ(Fake.MaxDepth, 2);
  EXPECT_EQ(Fake.Depth, 0);
  EXPECT_EQ(Fake.Ends, 2u);
}

TEST(NcclCallWalk, AStepAsCallsIsTheCapturedCallsInOrder) {
  auto L = lowerTwoGroups(1);
  ASSERT_TRUE(bool(L));
  std::vector<const Call *> Step = stepCalls(*L);
  std::vector<const Call *> Captured;
  for (const Call &C : L->Capture)
    if (C.Kind != CallKind::BeginCapture && C.Kind != CallKind::EndCapture &&
        C.Kind != CallKind::Instantiate)
      Captured.push_back(&C);
  EXPECT_EQ(Step, Captured);
}

} // namespace
