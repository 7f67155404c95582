//===- tests/runtime/NcclBrokenStateTest.cpp - How an NCCL executor breaks -===//
//
// Without a GPU: the order in which the NCCL executor breaks (its graphs
// before its communicators: NCCL 2.28's abort waits until no graph holds a
// communicator, so the other order never returns), that it breaks once,
// and that every path refuses afterwards with the first reason. On a GPU,
// GpuCapture.ATimedOutStepBreaksTheExecutorAndReturns runs the executor
// itself through it.
//
//===----------------------------------------------------------------------===//

#include "runtime/nccl/BrokenState.h"

#include "runtime/exec/RuntimeError.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace collc;
using namespace collc::rt;
using namespace collc::rt::nccl;

namespace {

TEST(NcclBrokenState, TheGraphsGoBeforeTheCommunicators) {
  BrokenState B;
  std::vector<std::string> Done;
  B.breakWith(
      "a timeout", [&] { Done.push_back("graphs destroyed"); },
      [&](const std::string &Why) { Done.push_back("communicators aborted after " + Why); });
  EXPECT_EQ(Done, (std::vector<std::string>{"graphs destroyed",
                                            "communicators aborted after a timeout"}));
  EXPECT_TRUE(B.broken());
}

TEST(NcclBrokenState, ItBreaksOnceAndKeepsTheFirstReason) {
  BrokenState B;
  unsigned Aborts = 0;
  auto Abort = [&](const std::string &) { ++Aborts; };
  B.breakWith(
      "communicator @tp subgroup 0 failed", [] {}, Abort);
  B.breakWith(
      "a later timeout", [] { ADD_FAILURE() << "graphs released twice"; }, Abort);
  EXPECT_EQ(Aborts, 1u);
  EXPECT_EQ(B.reason(), "communicator @tp subgroup 0 failed");
}

TEST(NcclBrokenState, EveryPathRefusesWithTheReason) {
  BrokenState B;
  EXPECT_FALSE(bool(B.refuse("replay")));
  B.breakWith(
      "communicator the world: ranks 0-1 failed: NCCL error 6", [] {}, [](const std::string &) {});
  for (const char *Verb : {"replay", "run an eager step", "enqueue into the caller's stream",
                           "copy into %x", "capture"}) {
    llvm::Error E = B.refuse(Verb);
    ASSERT_TRUE(bool(E));
    std::string Text;
    ErrorKind Kind = ErrorKind::InvalidArgument;
    llvm::handleAllErrors(std::move(E), [&](const RuntimeError &R) {
      Kind = R.kind();
      Text = R.text();
    });
    EXPECT_EQ(Kind, ErrorKind::Broken);
    EXPECT_EQ(Text, std::string("refusing to ") + Verb +
                        ": its communicators were aborted after communicator the world: ranks "
                        "0-1 failed: NCCL error 6");
  }
}

} // namespace
