//===- tests/runtime/HostStreamTest.cpp - The host comm stream's worker --===//

#include "runtime/exec/HostStream.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <memory>
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

/// A task too large to be stored inline lives on the heap; moving it
/// (enqueue moves each task at least once) hands it over whole, and it is
/// destroyed exactly once, after it ran.
TEST(HostStream, ATaskLargerThanItsInlineStorageRunsAndIsDestroyedOnce) {
  struct Counted {
    std::shared_ptr<std::atomic<int>> Destroyed;
    Counted(std::shared_ptr<std::atomic<int>> D) : Destroyed(std::move(D)) {}
    Counted(Counted &&O) noexcept : Destroyed(std::move(O.Destroyed)) {}
    ~Counted() {
      if (Destroyed)
        Destroyed->fetch_add(1);
    }
  };
  auto Destroyed = std::make_shared<std::atomic<int>>(0);
  std::array<uint64_t, 64> Payload{};
  for (size_t I = 0; I != Payload.size(); ++I)
    Payload[I] = I * 7;
  uint64_t Sum = 0;
  {
    HostStream S("large");
    auto Large = [C = Counted(Destroyed), Payload, &Sum]() mutable -> llvm::Error {
      for (uint64_t V : Payload)
        Sum += V;
      return llvm::Error::success();
    };
    static_assert(sizeof(Large) > HostStream::Task::InlineBytes, "must not fit inline");
    HostStream::Task T(std::move(Large));
    HostStream::Task Moved(std::move(T));
    T = std::move(Moved);
    S.enqueue(std::move(T));
    llvm::Error E = S.synchronize();
    EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  }
  EXPECT_EQ(Sum, 7u * 63 * 64 / 2);
  EXPECT_EQ(Destroyed->load(), 1) << "the task's captures were destroyed that many times";
}

} // namespace
