//===- tests/runtime/LoopFailureExitTest.cpp - Gloo's loop thread fails as a rank -===//
//
// runtime/gloo/LoopFailureExit.h: a Gloo exception that escapes a thread
// (as Gloo's event loop throws when a connection was reset before it
// accepted it) ends the process with status 1 and its text, not SIGABRT;
// any other uncaught exception still aborts. Each case runs in a child
// process (a death test), the handler installed there. Before the handler,
// a survivor of a rank killed in a gloo join of 4 died by SIGABRT in about
// 1 of 66 runs of tests/launch/fault_matrix.py.
//
//===----------------------------------------------------------------------===//

#include "runtime/gloo/LoopFailureExit.h"

#include "gtest/gtest.h"

#include <gloo/common/error.h>
#include <gloo/common/logging.h>

#include <csignal>
#include <stdexcept>
#include <thread>

using namespace collc::rt::gloo;

namespace {

/// Throws \p X on a thread of its own, as Gloo's loop thread does.
template <typename Exception> void throwOnAThread(Exception X) {
  std::thread([X] { throw X; }).join();
}

TEST(LoopFailureExitDeathTest, AGlooEnforceOnAThreadEndsWithStatusOneAndSaysWhy) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        endProcessOnGlooLoopFailure();
        throwOnAThread(::gloo::EnforceNotMet("address.cc", 98, "rv != -1",
                                             "getpeername: Transport endpoint is not connected"));
      },
      testing::ExitedWithCode(1),
      "collc: gloo: its network thread failed: .*getpeername: Transport endpoint is not "
      "connected.*a peer ended, or gave up joining a group.*status 1");
}

TEST(LoopFailureExitDeathTest, AGlooIoExceptionOnAThreadEndsWithStatusOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        endProcessOnGlooLoopFailure();
        throwOnAThread(::gloo::IoException("Connection reset by peer"));
      },
      testing::ExitedWithCode(1), "its network thread failed: Connection reset by peer");
}

TEST(LoopFailureExitDeathTest, AnyOtherUncaughtExceptionStillAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        endProcessOnGlooLoopFailure();
        throwOnAThread(std::logic_error("a bug of collc's own"));
      },
      testing::KilledBySignal(SIGABRT), "");
}

} // namespace
