// The runtime's one timeout default (runtime/exec/Timeout.h): COLLC_TIMEOUT_MS
// is parsed strictly and replaces the 300 s default on every backend. That
// it reaches the NCCL waits is checked in tests/gpu/NcclGpuTest.cpp (the
// NcclBackend tests, which also run without a GPU); the local backend's,
// below and in tests/lit/run/timeout.test.
#include "runtime/exec/Timeout.h"

#include "runtime/exec/Executor.h"
#include "runtime/interfaces/Communicator.h"
#include "runtime/local/MeetingPoint.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace collc::rt;
using std::chrono::milliseconds;

namespace {

std::string parseError(const char *Text) {
  auto T = parseTimeoutMs(Text, "--timeout-ms");
  return T ? std::string("accepted") : llvm::toString(T.takeError());
}

TEST(Timeout, ParsesWholeMilliseconds) {
  auto T = parseTimeoutMs("20000", "x");
  ASSERT_TRUE(bool(T));
  EXPECT_EQ(*T, milliseconds(20000));
  auto Max = parseTimeoutMs("86400000", "x");
  ASSERT_TRUE(bool(Max));
  EXPECT_EQ(*Max, milliseconds(86400000));
}

TEST(Timeout, RefusesWhatIsNotATimeout) {
  for (const char *Bad : {"", "0", "-5", "12s", " 5", "1.5", "86400001", "99999999999999999999"})
    EXPECT_EQ(parseError(Bad), "--timeout-ms is '" + std::string(Bad) +
                                   "': expected a timeout in milliseconds, 1 to 86400000")
        << Bad;
}

TEST(Timeout, TheEnvironmentReplacesTheDefault) {
  ASSERT_EQ(unsetenv(kTimeoutVariable), 0);
  EXPECT_EQ(defaultTimeout(), milliseconds(300000));
  ASSERT_EQ(setenv(kTimeoutVariable, "1500", 1), 0);
  EXPECT_EQ(defaultTimeout(), milliseconds(1500));
  auto T = timeoutFromEnvironment();
  ASSERT_TRUE(bool(T));
  EXPECT_EQ(*T, milliseconds(1500));
  // Malformed: an error naming the variable; the default stays the built-in.
  ASSERT_EQ(setenv(kTimeoutVariable, "soon", 1), 0);
  auto Bad = timeoutFromEnvironment();
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(llvm::toString(Bad.takeError()),
            "COLLC_TIMEOUT_MS is 'soon': expected a timeout in milliseconds, 1 to 86400000");
  EXPECT_EQ(defaultTimeout(), milliseconds(300000));
  unsetenv(kTimeoutVariable);
}

// Every backend's options take the one default: the local executor's, the
// Communicator's and the local meeting point's waits as much as NCCL's.
TEST(Timeout, EveryDefaultOfTheRuntimeFollowsTheEnvironment) {
  ASSERT_EQ(setenv(kTimeoutVariable, "2500", 1), 0);
  EXPECT_EQ(ExecutorOptions().Timeout, milliseconds(2500));
  EXPECT_EQ(CommunicatorOptions().Timeout, milliseconds(2500));
  EXPECT_EQ(local::WaitPolicy().Timeout, milliseconds(2500));
  unsetenv(kTimeoutVariable);
  EXPECT_EQ(ExecutorOptions().Timeout, milliseconds(300000));
}

} // namespace
