//===- tests/api/RecordApiTest.cpp - collc.h: flight records ---------------===//
//
// Where an executor's record is dumped (collcExecutorRecordTo), a dump on
// demand (collcExecutorRecordDump), and the dump a failing capture leaves:
// through libcollc.so only, ranks of the local backend on two threads.
//
//===----------------------------------------------------------------------===//

#include "ApiTestUtil.h"
#include "tests/support/JsonPaths.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <array>
#include <functional>
#include <string>
#include <thread>

using namespace collc::apitest;

namespace {

struct ScratchDir {
  llvm::SmallString<128> Path;
  ScratchDir() { EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-api-record", Path)); }
  ~ScratchDir() { llvm::sys::fs::remove_directories(Path); }
  std::string file(int Rank) const {
    llvm::SmallString<128> F(Path);
    llvm::sys::path::append(F, "collc-record-rank" + std::to_string(Rank) + ".json");
    return std::string(F);
  }
};

/// The dump at \p Path by JSON pointer, or none (the test fails, saying
/// why).
std::optional<collc::test::JsonPaths> readDump(const std::string &Path) {
  llvm::Expected<collc::test::JsonPaths> J = collc::test::JsonPaths::read(Path);
  if (!J) {
    ADD_FAILURE() << llvm::toString(J.takeError());
    return std::nullopt;
  }
  return std::move(*J);
}

TEST(RecordApiTest, AStepReplayedIsInTheDumpOnDemandAndAtTheEnd) {
  collcPlan_t P = compileNone(TwoReduces);
  ScratchDir OnDemand, AtEnd;
  std::array<collcResult_t, 2> R = onTwoRanks([&](int64_t Rank) -> collcResult_t {
    collcExecutorOptions_t O = localOptions("api.record.steps");
    collcExecutor_t X = nullptr;
    std::array<float, 4> In{}, Out{};
    if (collcResult_t E = collcExecutorCreate(P, Rank, &O, &X))
      return E;
    collcExecutorBind(X, "a", In.data(), 16);
    collcExecutorBind(X, "r", Out.data(), 16);
    collcResult_t E = collcExecutorRecordTo(X, AtEnd.Path.c_str(), /*atExit=*/1);
    if (!E)
      E = collcExecutorCapture(X);
    if (!E)
      E = collcExecutorReplay(X, nullptr, nullptr);
    if (!E)
      E = collcExecutorRecordDump(X, OnDemand.Path.c_str());
    collcExecutorDestroy(X);
    return E;
  });
  ASSERT_EQ(R[0], collcSuccess) << collcGetLastError();
  ASSERT_EQ(R[1], collcSuccess);
  for (int Rank : {0, 1}) {
    std::optional<collc::test::JsonPaths> Now = readDump(OnDemand.file(Rank));
    std::optional<collc::test::JsonPaths> End = readDump(AtEnd.file(Rank));
    ASSERT_TRUE(Now && End);
    EXPECT_EQ(Now->str("/reason"), "request");
    EXPECT_EQ(End->str("/reason"), "exit");
    ASSERT_EQ(Now->size("/events"), 1);
    EXPECT_EQ(Now->str("/events/0/op"), "all_reduce");
    EXPECT_EQ(Now->str("/events/0/state"), "completed");
  }
  collcPlanDestroy(P);
}

TEST(RecordApiTest, ACaptureRefusedForOtherPlansLeavesItsDump) {
  collcPlan_t Mine = compileNone(TwoReduces), Other = compileNone(OtherReduce);
  ScratchDir Dir;
  std::array<collcResult_t, 2> R = onTwoRanks([&](int64_t Rank) -> collcResult_t {
    collcExecutorOptions_t O = localOptions("api.record.digest");
    collcExecutor_t X = nullptr;
    if (collcResult_t E = collcExecutorCreate(Rank == 0 ? Mine : Other, Rank, &O, &X))
      return E;
    std::array<float, 8> Buf{};
    collcExecutorBind(X, "a", Buf.data(), Rank == 0 ? 16 : 32);
    collcExecutorBind(X, "r", Buf.data(), Rank == 0 ? 16 : 32);
    collcResult_t E = collcExecutorRecordTo(X, Dir.Path.c_str(), 0);
    if (!E)
      E = collcExecutorCapture(X);
    collcExecutorDestroy(X);
    return E;
  });
  EXPECT_NE(R[0], collcSuccess);
  EXPECT_NE(R[1], collcSuccess);
  for (int Rank : {0, 1}) {
    std::optional<collc::test::JsonPaths> J = readDump(Dir.file(Rank));
    ASSERT_TRUE(J);
    EXPECT_EQ(J->str("/reason"), "failure");
    EXPECT_EQ(J->str("/error/kind"), "mismatch");
    const char *Digest = nullptr;
    ASSERT_OK(collcPlanDigest(Rank == 0 ? Mine : Other, &Digest));
    EXPECT_EQ(J->str("/plan/digest"), Digest);
  }
  collcPlanDestroy(Mine);
  collcPlanDestroy(Other);
}

TEST(RecordApiTest, RefusalsNameWhatIsWrong) {
  EXPECT_TRUE(refused(collcExecutorRecordTo(nullptr, "d", 0), collcInvalidArgument, {"exec"}));
  EXPECT_TRUE(refused(collcExecutorRecordDump(nullptr, nullptr), collcInvalidArgument,
                      {"exec"}));
  collcPlan_t P = compileNone(TwoReduces);
  collcExecutorOptions_t O = localOptions("api.record.refusals");
  O.digestHandshake = 0;
  // Rank 0's executor needs rank 1 to join its groups; its refusals need
  // nothing more of it.
  collcExecutor_t X = nullptr;
  std::thread Peer([&] {
    collcExecutor_t Y = nullptr;
    if (collcExecutorCreate(P, 1, &O, &Y) == collcSuccess)
      collcExecutorDestroy(Y);
  });
  ASSERT_OK(collcExecutorCreate(P, 0, &O, &X));
  Peer.join();
  EXPECT_TRUE(refused(collcExecutorRecordDump(X, nullptr), collcInvalidArgument,
                      {"no directory"}));
  EXPECT_TRUE(refused(collcExecutorRecordTo(X, nullptr, 1), collcInvalidArgument,
                      {"atExit", "dir"}));
  EXPECT_OK(collcExecutorRecordTo(X, nullptr, 0));
  collcExecutorDestroy(X);
  collcPlanDestroy(P);
}

} // namespace
