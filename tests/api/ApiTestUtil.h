//===- tests/api/ApiTestUtil.h - Helpers of the C API tests ------*- C++ -*-===//
#ifndef COLLC_TESTS_API_APITESTUTIL_H
#define COLLC_TESTS_API_APITESTUTIL_H

#include "collc/collc.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <functional>
#include <thread>

#include <string>
#include <thread>

namespace collc::apitest {

/// Expects \p Got == \p Want and, for a failure, that the last error
/// mentions every one of \p Words.
inline ::testing::AssertionResult refused(collcResult_t Got, collcResult_t Want,
                                          std::initializer_list<const char *> Words) {
  std::string Last = collcGetLastError();
  if (Got != Want)
    return ::testing::AssertionFailure()
           << "got " << collcGetErrorString(Got) << ", want " << collcGetErrorString(Want)
           << "; last error: " << Last;
  for (const char *W : Words)
    if (Last.find(W) == std::string::npos)
      return ::testing::AssertionFailure() << "last error lacks '" << W << "': " << Last;
  return ::testing::AssertionSuccess();
}

/// Runs \p Body(rank) on two threads and returns what each returned.
inline std::array<collcResult_t, 2>
onTwoRanks(const std::function<collcResult_t(int64_t)> &Body) {
  std::array<collcResult_t, 2> R{collcInternalError, collcInternalError};
  std::thread T1([&] { R[1] = Body(1); });
  R[0] = Body(0);
  T1.join();
  return R;
}

/// Options of a local executor meeting at \p Rendezvous.
inline collcExecutorOptions_t localOptions(const char *Rendezvous, int64_t TimeoutMs = 20000) {
  collcExecutorOptions_t O;
  collcExecutorOptionsInit(&O);
  O.rendezvous = Rendezvous;
  O.timeoutMs = TimeoutMs;
  return O;
}

#define EXPECT_OK(Call) EXPECT_EQ((Call), collcSuccess) << collcGetLastError()
#define ASSERT_OK(Call) ASSERT_EQ((Call), collcSuccess) << collcGetLastError()

/// Two independent f32 all_reduces (sum) over world 2; with bucketPolicy
/// "none" each is its own op, and its tensors are bound by the caller.
inline const char *TwoReduces = R"(program @two world(2) {
  group @dp = world
  %a = compute @fwd cost(1us) : f32[4]
  %r = all_reduce sum %a in @dp
  compute @use(%r) cost(1us)
})";

/// The same shape with another size: a different digest.
inline const char *OtherReduce = R"(program @two world(2) {
  group @dp = world
  %a = compute @fwd cost(1us) : f32[8]
  %r = all_reduce sum %a in @dp
  compute @use(%r) cost(1us)
})";

/// Two all_reduces that share a bucket: their tensors are zero-copy views
/// in the bucket's buffer.
inline const char *BucketedReduces = R"(program @bucketed world(2) {
  group @dp = world
  %a = compute @fwd cost(1us) : f32[4]
  %b = compute @fwd2 cost(1us) : f32[8]
  %r = all_reduce sum %a in @dp
  %s = all_reduce sum %b in @dp
  compute @use(%r, %s) cost(1us)
})";

/// Two 64-byte gathers that one compute needs, which the default pipeline
/// puts in one bucket: 128 bytes of tensors and 2528 of staging per rank.
inline const char *TwoGathers = R"(program @g world(4) {
  group @dp = world
  %s0, %s1 = compute @shards : f32[4], f32[4]
  %w0 = all_gather %s0 in @dp
  %w1 = all_gather %s1 in @dp
  compute @use(%w0, %w1)
}
)";

/// A plan of \p Text compiled with bucket policy "none" (or fails the test).
inline collcPlan_t compileNone(const char *Text) {
  collcCompileOptions_t O;
  collcCompileOptionsInit(&O);
  O.bucketPolicy = "none";
  collcPlan_t P = nullptr;
  EXPECT_OK(collcCompile(Text, &O, &P));
  return P;
}

} // namespace collc::apitest

#endif
