//===- tests/runtime/NcclWatchdogTest.cpp - A deadline for calls that may block -===//
//
// The NCCL executor's watchdog (runtime/nccl/Watchdog.h), without a GPU: a
// call that ends in time is left alone, one that does not gets the expiry
// action once, naming it, and the watchdog stops promptly however it is
// armed. Deadlines are generous both ways: the machine may be loaded.
//
//===----------------------------------------------------------------------===//

#include "runtime/nccl/Watchdog.h"

#include "gtest/gtest.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

using namespace collc::rt::nccl;
using namespace std::chrono_literals;

namespace {

/// Records what expired.
struct Expiries {
  std::mutex M;
  std::vector<std::string> Seen;
  std::function<void(const std::string &)> action() {
    return [this](const std::string &Why) {
      std::lock_guard<std::mutex> Lock(M);
      Seen.push_back(Why);
    };
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> Lock(M);
    return Seen;
  }
};

/// Waits (up to 20 s) until \p W has expired \p N times.
bool expiresWithin(const Watchdog &W, unsigned N) {
  for (auto Until = std::chrono::steady_clock::now() + 20s;
       std::chrono::steady_clock::now() < Until; std::this_thread::sleep_for(5ms))
    if (W.expired() >= N)
      return true;
  return false;
}

TEST(NcclWatchdog, ACallThatEndsInTimeIsLeftAlone) {
  Expiries E;
  Watchdog W(E.action());
  for (int I = 0; I != 100; ++I)
    EXPECT_EQ(W.watch([] { return std::string("ncclGroupEnd (eager step)"); }, 60000ms,
                      [I] { return I; }),
              I);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(W.expired(), 0u);
  EXPECT_TRUE(E.seen().empty());
}

TEST(NcclWatchdog, ACallPastItsDeadlineGetsTheActionOnceNamingIt) {
  Expiries E;
  Watchdog W(E.action());
  // A call that returns only once the action has run (as a blocked NCCL
  // call returns once its communicator is aborted).
  bool Returned = W.watch([] { return std::string("ncclGroupEnd (warm-up)"); }, 20ms,
                          [&] {
                            bool Expired = expiresWithin(W, 1);
                            std::this_thread::sleep_for(100ms); // still armed: no second expiry
                            return Expired;
                          });
  EXPECT_TRUE(Returned);
  EXPECT_EQ(W.expired(), 1u);
  EXPECT_EQ(E.seen(), std::vector<std::string>{"ncclGroupEnd (warm-up) took more than 20 ms"});
  // Armed again, it watches again.
  EXPECT_TRUE(W.watch([] { return std::string("ncclAllGather of split sizes"); }, 20ms,
                      [&] { return expiresWithin(W, 2); }));
  EXPECT_EQ(E.seen().back(), "ncclAllGather of split sizes took more than 20 ms");
}

TEST(NcclWatchdog, ItStopsPromptlyWithADeadlineAhead) {
  Expiries E;
  auto Start = std::chrono::steady_clock::now();
  {
    Watchdog W(E.action());
    W.watch([] { return std::string("a call due in an hour"); }, 3600000ms, [] {});
  }
  EXPECT_LT(std::chrono::steady_clock::now() - Start, 10s);
  EXPECT_TRUE(E.seen().empty());
}

} // namespace
