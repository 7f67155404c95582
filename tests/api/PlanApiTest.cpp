//===- tests/api/PlanApiTest.cpp - collc.h: errors, compile, load, save, diff ===//

#include "ApiTestUtil.h"

#include "compiler/Compile.h"
#include "plan/Plan.h"
#include "plan/PlanDiff.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <fstream>
#include <set>

using namespace collc::apitest;

namespace {

TEST(CApiErrors, EveryResultHasItsOwnNamedString) {
  std::set<std::string> Seen;
  for (int R = collcSuccess; R != collcNumResults; ++R) {
    std::string S = collcGetErrorString(collcResult_t(R));
    EXPECT_EQ(S.rfind("collc", 0), 0u) << S;
    EXPECT_TRUE(Seen.insert(S).second) << "twice: " << S;
  }
  EXPECT_STREQ(collcGetErrorString(collcResult_t(99)), "unknown collcResult_t");
}

TEST(CApiErrors, LastErrorIsClearedBySuccessAndKeptPerThread) {
  EXPECT_EQ(collcGetVersion(nullptr), collcInvalidArgument);
  std::string Mine = collcGetLastError();
  EXPECT_EQ(Mine, "collcGetVersion: version is NULL: expected where to store the version");
  std::string Other = "unset";
  std::thread([&] { Other = collcGetLastError(); }).join();
  EXPECT_EQ(Other, "") << "another thread sees its own last error";
  int V = 0;
  EXPECT_OK(collcGetVersion(&V));
  EXPECT_EQ(V, COLLC_VERSION_CODE);
  EXPECT_STREQ(collcGetLastError(), "");
}

TEST(CApiErrors, InitFunctionsRefuseNullAndFillTheSize) {
  collcCompileOptions_t C;
  collcDumpOptions_t D;
  collcSimResult_t S;
  collcExecutorOptions_t E;
  EXPECT_OK(collcCompileOptionsInit(&C));
  EXPECT_OK(collcDumpOptionsInit(&D));
  EXPECT_OK(collcSimResultInit(&S));
  EXPECT_OK(collcExecutorOptionsInit(&E));
  EXPECT_EQ(C.size, sizeof C);
  EXPECT_EQ(D.size, sizeof D);
  EXPECT_EQ(S.size, sizeof S);
  EXPECT_EQ(E.size, sizeof E);
  EXPECT_EQ(D.focusRank, -1);
  EXPECT_EQ(E.digestHandshake, 1);
  // The sized calls (collc.h's Init macros), then version 1's symbols.
  EXPECT_TRUE(refused(collcCompileOptionsInitSized(nullptr, sizeof C), collcInvalidArgument,
                      {"options is NULL"}));
  EXPECT_TRUE(refused(collcDumpOptionsInitSized(nullptr, sizeof D), collcInvalidArgument,
                      {"options is NULL"}));
  EXPECT_TRUE(refused(collcSimResultInitSized(nullptr, sizeof S), collcInvalidArgument,
                      {"result is NULL"}));
  EXPECT_TRUE(refused(collcExecutorOptionsInitSized(nullptr, sizeof E), collcInvalidArgument,
                      {"options is NULL"}));
  EXPECT_TRUE(
      refused((collcCompileOptionsInit)(nullptr), collcInvalidArgument, {"options is NULL"}));
  EXPECT_TRUE(refused((collcDumpOptionsInit)(nullptr), collcInvalidArgument, {"options is NULL"}));
  EXPECT_TRUE(refused((collcSimResultInit)(nullptr), collcInvalidArgument, {"result is NULL"}));
  EXPECT_TRUE(
      refused((collcExecutorOptionsInit)(nullptr), collcInvalidArgument, {"options is NULL"}));
}

TEST(CApiCompile, GivesThePlanTheCompilerGives) {
  collcPlan_t P = nullptr;
  ASSERT_OK(collcCompile(TwoReduces, nullptr, &P));
  llvm::Expected<collc::plan::Plan> Want = collc::compileProgramText(TwoReduces);
  ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
  const char *Digest = nullptr;
  EXPECT_OK(collcPlanDigest(P, &Digest));
  EXPECT_EQ(std::string(Digest), Want->Digest);
  int64_t World = 0;
  EXPECT_OK(collcPlanWorld(P, &World));
  EXPECT_EQ(World, 2);
  EXPECT_OK(collcPlanDestroy(P));
  EXPECT_OK(collcPlanDestroy(nullptr));
  // A destroyed plan is refused, not read (nor freed twice).
  EXPECT_TRUE(refused(collcPlanWorld(P, &World), collcInvalidArgument,
                      {"collcPlanWorld: plan (", ") is not a live plan"}));
  char *Diff = nullptr;
  EXPECT_TRUE(refused(collcPlanDiff(P, P, &Diff), collcInvalidArgument,
                      {"collcPlanDiff: a (", ") is not a live plan"}));
  EXPECT_TRUE(refused(collcPlanDestroy(P), collcInvalidArgument,
                      {"collcPlanDestroy: plan (", ") is not a live plan"}));
}

TEST(CApiCompile, OptionsReachThePipeline) {
  collcCompileOptions_t O;
  collcCompileOptionsInit(&O);
  O.world = 4;
  O.align = 1024;
  O.views = 0;
  O.bucketPolicy = "fixed:1MiB";
  collcPlan_t P = nullptr;
  ASSERT_OK(collcCompile(TwoReduces, &O, &P));
  int64_t World = 0;
  EXPECT_OK(collcPlanWorld(P, &World));
  EXPECT_EQ(World, 4);
  char *Text = nullptr;
  ASSERT_OK(collcPlanText(P, &Text));
  std::string T = Text;
  collcFree(Text);
  EXPECT_NE(T.find("align 1024"), std::string::npos) << T;
  EXPECT_NE(T.find("bucket{policy=fixed"), std::string::npos) << T;
  EXPECT_NE(T.find("views=false"), std::string::npos) << T;
  EXPECT_NE(T.find("note \"bucket: fixed:1MiB\""), std::string::npos) << T;
  collcPlanDestroy(P);

  collcCompileOptionsInit(&O);
  O.pipeline = "verify,check-cross-rank,order,schedule,plan-memory";
  ASSERT_OK(collcCompile(TwoReduces, &O, &P));
  ASSERT_OK(collcPlanText(P, &Text));
  EXPECT_NE(std::string(Text).find("note \"pipeline: verify,check-cross-rank,order,schedule,"
                                   "plan-memory\""),
            std::string::npos)
      << Text;
  collcFree(Text);
  collcPlanDestroy(P);
}

TEST(CApiCompile, RefusesWithTheValueAndWhatWasExpected) {
  collcPlan_t P = nullptr;
  EXPECT_TRUE(refused(collcCompile(nullptr, nullptr, &P), collcInvalidArgument,
                      {"collcCompile: program is NULL"}));
  EXPECT_TRUE(refused(collcCompile(TwoReduces, nullptr, nullptr), collcInvalidArgument,
                      {"plan is NULL"}));
  collcCompileOptions_t O;
  collcCompileOptionsInit(&O);
  O.size = 8;
  EXPECT_TRUE(refused(collcCompile(TwoReduces, &O, &P), collcInvalidArgument,
                      {"options->size is 8", "Init"}));
  collcCompileOptionsInit(&O);
  O.world = -3;
  EXPECT_TRUE(refused(collcCompile(TwoReduces, &O, &P), collcInvalidArgument,
                      {"options->world is -3: expected 0..1048576"}));
  collcCompileOptionsInit(&O);
  O.bucketPolicy = "sometimes";
  EXPECT_TRUE(refused(collcCompile(TwoReduces, &O, &P), collcInvalidArgument,
                      {"options->bucketPolicy", "sometimes"}));
  collcCompileOptionsInit(&O);
  O.align = 100;
  EXPECT_TRUE(refused(collcCompile(TwoReduces, &O, &P), collcInvalidArgument,
                      {"options->align is 100: expected a power of two"}));
  collcCompileOptionsInit(&O);
  O.pipeline = "verify";
  O.bucketPolicy = "ddp";
  EXPECT_TRUE(refused(collcCompile(TwoReduces, &O, &P), collcInvalidArgument,
                      {"pipeline cannot be combined with bucketPolicy"}));
  collcCompileOptionsInit(&O);
  O.pipeline = "verify,no-such-pass";
  EXPECT_TRUE(refused(collcCompile(TwoReduces, &O, &P), collcInvalidArgument, {"no-such-pass"}));
  EXPECT_EQ(P, nullptr) << "no plan is stored on a failure";
}

TEST(CApiCompile, AProgramErrorIsItsLocatedDiagnostic) {
  collcCompileOptions_t O;
  collcCompileOptionsInit(&O);
  O.sourceName = "model.coll";
  collcPlan_t P = nullptr;
  const char *Bad = "program @bad world(2) {\n  %r = all_reduce sum %nope in world\n}\n";
  EXPECT_TRUE(refused(collcCompile(Bad, &O, &P), collcInvalidArgument,
                      {"collcCompile: ", "model.coll:2:", "%nope"}));
}

TEST(CApiPlanFile, TextLoadsBackToTheSameDigest) {
  collcPlan_t P = compileNone(TwoReduces);
  char *Text = nullptr;
  ASSERT_OK(collcPlanText(P, &Text));
  collcPlan_t Q = nullptr;
  ASSERT_OK(collcPlanLoad(Text, &Q));
  collcFree(Text);
  const char *A = nullptr, *B = nullptr;
  collcPlanDigest(P, &A);
  collcPlanDigest(Q, &B);
  EXPECT_STREQ(A, B);
  EXPECT_EQ(std::string(A).rfind("xxh64:", 0), 0u);
  collcPlanDestroy(P);
  collcPlanDestroy(Q);
}

TEST(CApiPlanFile, SaveWritesWhatLoadFileReads) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-api", Dir));
  std::string Path = (Dir + "/two.plan").str();
  collcPlan_t P = compileNone(TwoReduces);
  ASSERT_OK(collcPlanSave(P, Path.c_str()));
  collcPlan_t Q = nullptr;
  ASSERT_OK(collcPlanLoadFile(Path.c_str(), &Q));
  const char *A = nullptr, *B = nullptr;
  collcPlanDigest(P, &A);
  collcPlanDigest(Q, &B);
  EXPECT_STREQ(A, B);
  char *Text = nullptr;
  collcPlanText(P, &Text);
  auto File = llvm::MemoryBuffer::getFile(Path);
  ASSERT_TRUE(bool(File));
  EXPECT_EQ((*File)->getBuffer().str(), std::string(Text));
  collcFree(Text);
  collcPlanDestroy(Q);

  std::string Missing = (Dir + "/no/such/dir/x.plan").str();
  EXPECT_TRUE(refused(collcPlanSave(P, Missing.c_str()), collcSystemError,
                      {"collcPlanSave: cannot write", Missing.c_str()}));
  EXPECT_TRUE(refused(collcPlanLoadFile(Missing.c_str(), &Q), collcInvalidArgument,
                      {"collcPlanLoadFile", Missing.c_str()}));
  collcPlanDestroy(P);
  llvm::sys::fs::remove_directories(Dir);
}

/// Saved as the tool writes its outputs: through a link (the file it names
/// is replaced, the link stays) and into a device in place (run as root, a
/// rename once put a plain file where /dev/null was).
TEST(CApiPlanFile, SaveFollowsALinkAndWritesADeviceInPlace) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-api", Dir));
  std::string Real = (Dir + "/real.plan").str(), Link = (Dir + "/link.plan").str();
  ASSERT_FALSE(llvm::sys::fs::create_link("real.plan", Link));
  collcPlan_t P = compileNone(TwoReduces);
  ASSERT_OK(collcPlanSave(P, Link.c_str()));
  llvm::sys::fs::file_status Status;
  ASSERT_FALSE(llvm::sys::fs::status(Link, Status, /*Follow=*/false));
  EXPECT_EQ(Status.type(), llvm::sys::fs::file_type::symlink_file);
  collcPlan_t Q = nullptr;
  ASSERT_OK(collcPlanLoadFile(Real.c_str(), &Q));
  collcPlanDestroy(Q);
  ASSERT_OK(collcPlanSave(P, "/dev/null"));
  ASSERT_FALSE(llvm::sys::fs::status("/dev/null", Status));
  EXPECT_EQ(Status.type(), llvm::sys::fs::file_type::character_file);
  collcPlanDestroy(P);
  llvm::sys::fs::remove_directories(Dir);
}

TEST(CApiPlanFile, RefusesBadTextAndNullArguments) {
  collcPlan_t P = nullptr;
  EXPECT_TRUE(refused(collcPlanLoad("collc-plan 1\nbogus\n", &P), collcInvalidArgument,
                      {"collcPlanLoad: ", "<plan text>"}));
  EXPECT_TRUE(refused(collcPlanLoad(nullptr, &P), collcInvalidArgument, {"text is NULL"}));
  EXPECT_TRUE(refused(collcPlanLoad("x", nullptr), collcInvalidArgument, {"plan is NULL"}));
  EXPECT_TRUE(refused(collcPlanLoadFile(nullptr, &P), collcInvalidArgument, {"path is NULL"}));
  EXPECT_TRUE(refused(collcPlanSave(nullptr, "/tmp/x"), collcInvalidArgument,
                      {"collcPlanSave: plan is NULL"}));
  collcPlan_t Q = compileNone(TwoReduces);
  EXPECT_TRUE(refused(collcPlanSave(Q, nullptr), collcInvalidArgument, {"path is NULL"}));
  char *Text = nullptr;
  EXPECT_TRUE(refused(collcPlanText(nullptr, &Text), collcInvalidArgument, {"plan is NULL"}));
  EXPECT_TRUE(refused(collcPlanText(Q, nullptr), collcInvalidArgument, {"text is NULL"}));
  const char *D = nullptr;
  EXPECT_TRUE(refused(collcPlanDigest(nullptr, &D), collcInvalidArgument, {"plan is NULL"}));
  EXPECT_TRUE(refused(collcPlanDigest(Q, nullptr), collcInvalidArgument, {"digest is NULL"}));
  int64_t W = 0;
  EXPECT_TRUE(refused(collcPlanWorld(nullptr, &W), collcInvalidArgument, {"plan is NULL"}));
  EXPECT_TRUE(refused(collcPlanWorld(Q, nullptr), collcInvalidArgument, {"world is NULL"}));
  collcFree(nullptr);
  collcPlanDestroy(Q);
}

TEST(CApiPlanTensorType, GivesTheElementTypeAndShapeOfTheTensor) {
  collcPlan_t P = compileNone(BucketedReduces);
  const char *Elem = nullptr;
  int64_t Rank = -1;
  const int64_t *Shape = nullptr;
  ASSERT_OK(collcPlanTensorType(P, "b", &Elem, &Rank, &Shape));
  EXPECT_STREQ(Elem, "f32");
  ASSERT_EQ(Rank, 1);
  EXPECT_EQ(Shape[0], 8);
  EXPECT_TRUE(refused(collcPlanTensorType(P, "nope", &Elem, &Rank, &Shape),
                      collcInvalidArgument,
                      {"collcPlanTensorType: name is \"nope\": plan @bucketed has no tensor %nope"}));
  // The IR's sigil may be given.
  Shape = nullptr;
  ASSERT_OK(collcPlanTensorType(P, "%b", &Elem, &Rank, &Shape));
  ASSERT_EQ(Rank, 1);
  EXPECT_EQ(Shape[0], 8);
  EXPECT_TRUE(refused(collcPlanTensorType(P, "%nope", &Elem, &Rank, &Shape), collcInvalidArgument,
                      {"name is \"%nope\": plan @bucketed has no tensor %nope"}));
  EXPECT_TRUE(refused(collcPlanTensorType(nullptr, "b", &Elem, &Rank, &Shape),
                      collcInvalidArgument, {"plan is NULL"}));
  EXPECT_TRUE(refused(collcPlanTensorType(P, nullptr, &Elem, &Rank, &Shape),
                      collcInvalidArgument, {"name is NULL"}));
  EXPECT_TRUE(refused(collcPlanTensorType(P, "b", nullptr, &Rank, &Shape), collcInvalidArgument,
                      {"elemType is NULL"}));
  EXPECT_TRUE(refused(collcPlanTensorType(P, "b", &Elem, nullptr, &Shape), collcInvalidArgument,
                      {"rank is NULL"}));
  EXPECT_TRUE(refused(collcPlanTensorType(P, "b", &Elem, &Rank, nullptr), collcInvalidArgument,
                      {"shape is NULL"}));
  collcPlanDestroy(P);
}

TEST(CApiPlanDiff, IsTheReportOfCollcDiff) {
  collcPlan_t P = nullptr, Q = nullptr;
  ASSERT_OK(collcCompile(TwoReduces, nullptr, &P));
  ASSERT_OK(collcCompile(OtherReduce, nullptr, &Q));
  char *Same = nullptr;
  ASSERT_OK(collcPlanDiff(P, P, &Same));
  EXPECT_STREQ(Same, "");
  collcFree(Same);
  char *Diff = nullptr;
  ASSERT_OK(collcPlanDiff(P, Q, &Diff));
  llvm::Expected<collc::plan::Plan> A = collc::compileProgramText(TwoReduces);
  llvm::Expected<collc::plan::Plan> B = collc::compileProgramText(OtherReduce);
  ASSERT_TRUE(A && B);
  std::string Want;
  for (const std::string &Line : collc::diffPlans(*A, *B))
    Want += Line + "\n";
  EXPECT_FALSE(Want.empty());
  EXPECT_EQ(std::string(Diff), Want);
  collcFree(Diff);
  EXPECT_TRUE(refused(collcPlanDiff(nullptr, Q, &Diff), collcInvalidArgument,
                      {"collcPlanDiff: a is NULL"}));
  EXPECT_TRUE(refused(collcPlanDiff(P, nullptr, &Diff), collcInvalidArgument, {"b is NULL"}));
  EXPECT_TRUE(refused(collcPlanDiff(P, Q, nullptr), collcInvalidArgument, {"diff is NULL"}));
  collcPlanDestroy(P);
  collcPlanDestroy(Q);
}

} // namespace

TEST(CApiCompile, MemoryBudgetReachesTheScheduleAndAVersion1StructStillCompiles) {
  // Two gathers of 64 bytes for one compute, bucketed: 128 bytes of tensors
  // and 2528 of staging, the bucket's buffers held all step: 2048 to unpack
  // (256-byte slots per rank) and the input buffer's 480 bytes of padding
  // around the two shards' views.
  collcCompileOptions_t O;
  ASSERT_OK(collcCompileOptionsInit(&O));
  EXPECT_EQ(O.memoryBudget, 0u);
  O.memoryBudget = 2000;
  collcPlan_t P = nullptr;
  EXPECT_TRUE(refused(collcCompile(TwoGathers, &O, &P), collcInvalidArgument,
                      {"memory budget of 2000 bytes cannot be met",
                       "is 2656 bytes (2 tensors + 2528 bytes staging)"}));
  O.memoryBudget = 2656;
  ASSERT_OK(collcCompile(TwoGathers, &O, &P));
  EXPECT_OK(collcPlanDestroy(P));
  // A caller built against version 1 (before memoryBudget) gets the default.
  O.size = offsetof(collcCompileOptions_t, memoryBudget);
  O.memoryBudget = 1; // beyond its size: never read
  ASSERT_OK(collcCompile(TwoGathers, &O, &P));
  EXPECT_OK(collcPlanDestroy(P));
  O.size = offsetof(collcCompileOptions_t, memoryBudget) - 1;
  EXPECT_TRUE(refused(collcCompile(TwoGathers, &O, &P), collcInvalidArgument, {"options->size is"}));
}
