//===- tests/runtime/HostStreamTest.cpp - The host comm stream's worker --===//

#include "runtime/exec/HostStream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <sys/prctl.h>
#include <thread>

using namespace collc::rt;

namespace {

TEST(HostStream, ItsWorkerRunsBlockingTasksWithAOneMicrosecondTimerSlack) {
  // What HostStream.cpp states: the worker's 1 us timer slack (for its
  // short sleeps between polls) covers the blocking tasks it runs too. The
  // task runs on the worker: kicked, and nobody waits for its ticket (a
  // waiter would run it itself).
  HostStream S("slack");
  std::atomic<bool> Ran{false};
  std::thread::id Runner;
  int Slack = -1;
  S.enqueue([&]() -> llvm::Error {
    Runner = std::this_thread::get_id();
    Slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    Ran.store(true, std::memory_order_release);
    return llvm::Error::success();
  });
  S.kick();
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!Ran.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(Ran.load(std::memory_order_acquire)) << "the worker did not run a kicked task";
  EXPECT_NE(Runner, std::this_thread::get_id());
  EXPECT_EQ(Slack, 1000) << "the worker's timer slack, in ns";
  llvm::Error E = S.synchronize();
  EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
}

} // namespace
