//===- tests/api/StructVersionTest.cpp - collc.h: structs of older callers ===//
//
// A binary built against version 1 of collc.h holds version-1 structs and
// calls the Init symbols as that header declared them: plain functions
// taking only a pointer. Each of those symbols must write that struct and
// nothing beyond it, whatever fields later versions added, and the calls
// that read or fill the struct afterwards must stay inside it too. The
// structs below are version 1's, as collc.h declared them when the API
// began; each lies between two canaries.
//
// A binary built against this collc.h calls the sized Init (collc.h's
// `collcSimResultInit(&r)` passes sizeof r), which fills exactly the size it
// is given.
//
//===----------------------------------------------------------------------===//

#include "ApiTestUtil.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

using namespace collc::apitest;

namespace {

// Version 1 of each versioned struct of collc.h.
struct CompileOptionsV1 {
  size_t size;
  const char *pipeline;
  const char *bucketPolicy;
  int64_t world;
  uint64_t align;
  int views;
  const char *sourceName;
};
struct DumpOptionsV1 {
  size_t size;
  collcDumpFormat_t format;
  int explain;
  const char *link;
  int64_t rank;
  int64_t focusRank;
  int64_t focusBucket;
  const char *focusSteps;
};
struct SimResultV1 {
  size_t size;
  double stepUs;
  double computeOnlyUs;
  double exposedCommUs;
  double commBusyUs;
  int64_t slowestRank;
};
struct ExecutorOptionsV1 {
  size_t size;
  const char *backend;
  const char *rendezvous;
  int64_t timeoutMs;
  int digestHandshake;
};

constexpr unsigned char Canary = 0xa5;

/// A struct \p S between two canaries: what a caller's stack frame holds
/// around it. Everything starts as the canary's byte.
template <class S> struct Fenced {
  Fenced() { std::memset(static_cast<void *>(this), Canary, sizeof *this); }
  unsigned char Before[64];
  S Value;
  unsigned char After[128];

  /// The struct as the library's type (a caller of an older collc.h passes
  /// its own, smaller struct under that name).
  template <class T> T *as() { return reinterpret_cast<T *>(&Value); }
  /// Whether the bytes around the struct are as they were.
  ::testing::AssertionResult intact() const {
    for (size_t I = 0; I != sizeof Before; ++I)
      if (Before[I] != Canary)
        return ::testing::AssertionFailure()
               << "byte " << sizeof Before - I << " before the struct was written";
    for (size_t I = 0; I != sizeof After; ++I)
      if (After[I] != Canary)
        return ::testing::AssertionFailure()
               << "byte " << I << " past the " << sizeof(S) << "-byte struct was written";
    return ::testing::AssertionSuccess();
  }
  /// Whether the struct itself is untouched too.
  bool untouched() const {
    const auto *P = reinterpret_cast<const unsigned char *>(&Value);
    for (size_t I = 0; I != sizeof(S); ++I)
      if (P[I] != Canary)
        return false;
    return true;
  }
};

// The Init symbols as an old binary calls them: `(collcSimResultInit)(p)` is
// the exported function itself, not collc.h's sized macro of that name.

TEST(CApiStructVersions, Version1InitSymbolsWriteOnlyAVersion1Struct) {
  Fenced<CompileOptionsV1> C;
  ASSERT_OK((collcCompileOptionsInit)(C.as<collcCompileOptions_t>()));
  EXPECT_TRUE(C.intact());
  EXPECT_EQ(C.Value.size, sizeof(CompileOptionsV1));
  EXPECT_EQ(C.Value.pipeline, nullptr);
  EXPECT_EQ(C.Value.bucketPolicy, nullptr);
  EXPECT_EQ(C.Value.world, 0);
  EXPECT_EQ(C.Value.align, 0u);
  EXPECT_EQ(C.Value.views, 1);
  EXPECT_EQ(C.Value.sourceName, nullptr);

  Fenced<DumpOptionsV1> D;
  ASSERT_OK((collcDumpOptionsInit)(D.as<collcDumpOptions_t>()));
  EXPECT_TRUE(D.intact());
  EXPECT_EQ(D.Value.size, sizeof(DumpOptionsV1));
  EXPECT_EQ(D.Value.format, collcDumpText);
  EXPECT_EQ(D.Value.explain, 0);
  EXPECT_EQ(D.Value.link, nullptr);
  EXPECT_EQ(D.Value.rank, 0);
  EXPECT_EQ(D.Value.focusRank, -1);
  EXPECT_EQ(D.Value.focusBucket, -1);
  EXPECT_EQ(D.Value.focusSteps, nullptr);

  Fenced<SimResultV1> S;
  ASSERT_OK((collcSimResultInit)(S.as<collcSimResult_t>()));
  EXPECT_TRUE(S.intact());
  EXPECT_EQ(S.Value.size, sizeof(SimResultV1));
  EXPECT_EQ(S.Value.stepUs, 0);
  EXPECT_EQ(S.Value.slowestRank, 0);

  Fenced<ExecutorOptionsV1> E;
  ASSERT_OK((collcExecutorOptionsInit)(E.as<collcExecutorOptions_t>()));
  EXPECT_TRUE(E.intact());
  EXPECT_EQ(E.Value.size, sizeof(ExecutorOptionsV1));
  EXPECT_EQ(E.Value.backend, nullptr);
  EXPECT_EQ(E.Value.rendezvous, nullptr);
  EXPECT_EQ(E.Value.timeoutMs, 0);
  EXPECT_EQ(E.Value.digestHandshake, 1);
}

TEST(CApiStructVersions, AVersion1CallerCompilesDumpsSimulatesAndRuns) {
  // The whole path of an old binary: Init, set fields, use; no call writes
  // beyond its structs.
  Fenced<CompileOptionsV1> C;
  ASSERT_OK((collcCompileOptionsInit)(C.as<collcCompileOptions_t>()));
  C.Value.bucketPolicy = "none";
  collcPlan_t P = nullptr;
  ASSERT_OK(collcCompile(TwoReduces, C.as<collcCompileOptions_t>(), &P));
  EXPECT_TRUE(C.intact());

  Fenced<DumpOptionsV1> D;
  ASSERT_OK((collcDumpOptionsInit)(D.as<collcDumpOptions_t>()));
  D.Value.format = collcDumpJSON;
  char *Json = nullptr;
  ASSERT_OK(collcPlanDump(P, D.as<collcDumpOptions_t>(), &Json));
  EXPECT_EQ(Json[0], '{');
  collcFree(Json);
  EXPECT_TRUE(D.intact());

  Fenced<SimResultV1> S;
  ASSERT_OK((collcSimResultInit)(S.as<collcSimResult_t>()));
  ASSERT_OK(collcPlanSimulate(P, "pcie", S.as<collcSimResult_t>()));
  EXPECT_TRUE(S.intact());
  EXPECT_EQ(S.Value.size, sizeof(SimResultV1));
  EXPECT_GT(S.Value.stepUs, 0);

  Fenced<ExecutorOptionsV1> E;
  ASSERT_OK((collcExecutorOptionsInit)(E.as<collcExecutorOptions_t>()));
  E.Value.rendezvous = "api-struct-v1";
  // One rank alone would wait for its peer at capture: creating is enough.
  collcExecutor_t X = nullptr;
  ASSERT_OK(collcExecutorCreate(P, 0, E.as<collcExecutorOptions_t>(), &X));
  EXPECT_TRUE(E.intact());
  EXPECT_OK(collcExecutorDestroy(X));
  EXPECT_OK(collcPlanDestroy(P));
}

TEST(CApiStructVersions, TheHeadersInitPassesTheCallersSize) {
  // The struct of this collc.h, through its Init as written in C.
  Fenced<collcSimResult_t> S;
  ASSERT_OK(collcSimResultInit(&S.Value));
  EXPECT_TRUE(S.intact());
  collcSimResult_t Want = COLLC_SIM_RESULT_INIT;
  EXPECT_EQ(std::memcmp(&S.Value, &Want, sizeof Want), 0) << "the macro's defaults";

  Fenced<collcCompileOptions_t> C;
  ASSERT_OK(collcCompileOptionsInit(&C.Value));
  EXPECT_TRUE(C.intact());
  EXPECT_EQ(C.Value.size, sizeof(collcCompileOptions_t));
  EXPECT_EQ(C.Value.memoryBudget, 0u);

  Fenced<collcDumpOptions_t> D;
  ASSERT_OK(collcDumpOptionsInit(&D.Value));
  EXPECT_TRUE(D.intact());
  EXPECT_EQ(D.Value.size, sizeof(collcDumpOptions_t));

  Fenced<collcExecutorOptions_t> E;
  ASSERT_OK(collcExecutorOptionsInit(&E.Value));
  EXPECT_TRUE(E.intact());
  EXPECT_EQ(E.Value.size, sizeof(collcExecutorOptions_t));
  EXPECT_EQ(E.Value.device, -1);
  EXPECT_EQ(E.Value.asyncReplay, 0);
}

TEST(CApiStructVersions, SizedInitFillsExactlyTheSizeGiven) {
  // A version-1 struct through the sized call (a caller of a later header
  // that kept the old struct, or a ctypes binding of version 1).
  Fenced<SimResultV1> S;
  ASSERT_OK(collcSimResultInitSized(S.as<collcSimResult_t>(), sizeof(SimResultV1)));
  EXPECT_TRUE(S.intact());
  EXPECT_EQ(S.Value.size, sizeof(SimResultV1));

  Fenced<ExecutorOptionsV1> E;
  ASSERT_OK(
      collcExecutorOptionsInitSized(E.as<collcExecutorOptions_t>(), sizeof(ExecutorOptionsV1)));
  EXPECT_TRUE(E.intact());
  EXPECT_EQ(E.Value.size, sizeof(ExecutorOptionsV1));
  EXPECT_EQ(E.Value.digestHandshake, 1);

  Fenced<CompileOptionsV1> C;
  ASSERT_OK(collcCompileOptionsInitSized(C.as<collcCompileOptions_t>(), sizeof(CompileOptionsV1)));
  EXPECT_TRUE(C.intact());
  EXPECT_EQ(C.Value.views, 1);

  Fenced<DumpOptionsV1> D;
  ASSERT_OK(collcDumpOptionsInitSized(D.as<collcDumpOptions_t>(), sizeof(DumpOptionsV1)));
  EXPECT_TRUE(D.intact());
  EXPECT_EQ(D.Value.focusBucket, -1);
}

/// "from V1 (version 1) to LAST": what a refusal of a size says is allowed.
template <class V1, class Last> std::string rangeOf() {
  return std::to_string(sizeof(V1)) + " (version 1) or " + std::to_string(sizeof(Last));
}

TEST(CApiStructVersions, SizedInitRefusesSizesNoVersionHadAndWritesNothing) {
  Fenced<collcSimResult_t> S;
  auto *R = &S.Value;
  std::string Range = rangeOf<SimResultV1, collcSimResult_t>();
  std::string Less = "size is " + std::to_string(sizeof(SimResultV1) - 1);
  EXPECT_TRUE(refused(collcSimResultInitSized(R, sizeof(SimResultV1) - 1), collcInvalidArgument,
                      {"collcSimResultInitSized: ", Less.c_str(), Range.c_str()}));
  // A caller built against a newer collc.h than this library: the library
  // does not know the defaults of the fields it added.
  std::string More = "size is " + std::to_string(sizeof *R + 8);
  EXPECT_TRUE(refused(collcSimResultInitSized(R, sizeof *R + 8), collcInvalidArgument,
                      {More.c_str(), Range.c_str(), "COLLC_SIM_RESULT_INIT"}));
  EXPECT_TRUE(refused(collcSimResultInitSized(R, 0), collcInvalidArgument, {"size is 0"}));
  // Between two versions: the struct would end in the middle of a field.
  if (sizeof(SimResultV1) + 2 < sizeof *R) {
    EXPECT_TRUE(refused(collcSimResultInitSized(R, sizeof(SimResultV1) + 2), collcInvalidArgument,
                        {Range.c_str()}));
  }
  EXPECT_TRUE(S.intact());
  EXPECT_TRUE(S.untouched());

  Fenced<collcCompileOptions_t> C;
  Range = rangeOf<CompileOptionsV1, collcCompileOptions_t>();
  EXPECT_TRUE(refused(collcCompileOptionsInitSized(&C.Value, sizeof(CompileOptionsV1) - 8),
                      collcInvalidArgument, {Range.c_str()}));
  Fenced<collcDumpOptions_t> D;
  Range = rangeOf<DumpOptionsV1, collcDumpOptions_t>();
  EXPECT_TRUE(refused(collcDumpOptionsInitSized(&D.Value, sizeof(collcDumpOptions_t) + 1),
                      collcInvalidArgument, {Range.c_str(), "COLLC_DUMP_OPTIONS_INIT"}));
  Fenced<collcExecutorOptions_t> E;
  Range = rangeOf<ExecutorOptionsV1, collcExecutorOptions_t>();
  EXPECT_TRUE(refused(collcExecutorOptionsInitSized(&E.Value, 1 << 20), collcInvalidArgument,
                      {"size is 1048576", Range.c_str()}));
  EXPECT_TRUE(C.untouched() && C.intact());
  EXPECT_TRUE(D.untouched() && D.intact());
  EXPECT_TRUE(E.untouched() && E.intact());

  EXPECT_TRUE(refused(collcSimResultInitSized(nullptr, sizeof *R), collcInvalidArgument,
                      {"result is NULL"}));
  EXPECT_TRUE(refused((collcSimResultInit)(nullptr), collcInvalidArgument, {"result is NULL"}));
}

} // namespace
