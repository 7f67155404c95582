// The NCCL backend on a GPU: capture and replay give the results of eager
// execution and of the independent reference; avg and premul_sum through a
// one-rank communicator (a real NCCL kernel); pack/unpack round trips; the
// refusals a user can meet. NCCL refuses two ranks on one GPU, so every
// communicator here has one rank; multi-rank semantics are the CPU
// backends' conformance suite. Without a GPU each test reports itself
// skipped, with the reason. The checks that need no GPU run everywhere.
//
// The suites are the phases of tests/gpu/device-run.sh, which runs each
// test in its own process in this order: NcclBackend (no GPU needed),
// GpuPack (plain CUDA), GpuComm (communicator start-up, one-rank calls),
// GpuCapture (graphs, ours and the caller's), GpuSendRecv (NCCL's group
// launch). A new test joins one of them.
#include "GpuTestUtil.h"
#include "TestKernels.h"

#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/IdGather.h"
#include "runtime/nccl/NcclCommunicator.h"
#include "runtime/nccl/NcclDriver.h"
#include "runtime/nccl/NcclVersion.h"
#include "runtime/exec/ElementConversion.h"
#include "runtime/nccl/PackKernels.h"
#include "runtime/nccl/UniqueIdExchange.h"
#include "runtime/verify/PlanChecker.h"

#include "llvm/Support/FileSystem.h"

#include <chrono>
#include <cstdlib>

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace collc;
using namespace collc::rt;
using namespace collc::rt::nccl;

namespace {

#define REQUIRE_GPU()                                                                              \
  do {                                                                                             \
    std::string Why = gpu::whyNoGpu();                                                             \
    if (!Why.empty())                                                                              \
      GTEST_SKIP() << Why;                                                                         \
  } while (0)

std::string errorText(llvm::Error E) { return llvm::toString(std::move(E)); }

// --- without a GPU ----------------------------------------------------------------

TEST(NcclBackend, TheLoadedNcclIsNewEnough) {
  EXPECT_FALSE(bool(checkNcclVersion()));
  EXPECT_EQ(ncclVersionString(20906), "2.9.6");
  EXPECT_EQ(ncclVersionString(22809), "2.28.9");
}

/// The binary binds NCCL's functions lazily: on an older NCCL it loads,
/// and the version check names what that NCCL lacks before any of it is
/// called (NcclVersion.h).
TEST(NcclBackend, AnNcclWithoutTheFunctionsCalledIsRefusedByName) {
  EXPECT_FALSE(bool(checkNcclVersionCode(21800)));
  EXPECT_EQ(errorText(checkNcclVersionCode(21705)),
            "NCCL 2.17.5 is loaded; collc's NCCL backend needs 2.18.0 or newer: it calls "
            "ncclCommSplit (2.18), which NCCL 2.17.5 lacks");
  EXPECT_EQ(errorText(checkNcclVersionCode(21304)),
            "NCCL 2.13.4 is loaded; collc's NCCL backend needs 2.18.0 or newer: it calls "
            "ncclCommInitRankConfig and ncclCommFinalize (2.14), ncclCommSplit (2.18), which "
            "NCCL 2.13.4 lacks");
}

TEST(NcclBackend, ElementsRefusesPartialElements) {
  auto E = NcclDriver::elements(ElemType::F32, 6);
  ASSERT_FALSE(bool(E));
  EXPECT_NE(errorText(E.takeError()).find("6 bytes are not a whole number of f32 elements"),
            std::string::npos);
  auto B = NcclDriver::elements(ElemType::BF16, 8);
  ASSERT_TRUE(bool(B));
  EXPECT_EQ(B->Type, ncclBfloat16);
  EXPECT_EQ(B->Count, 4u);
  auto I = NcclDriver::elements(ElemType::U64, 16);
  ASSERT_TRUE(bool(I));
  EXPECT_EQ(I->Type, ncclUint64);
  EXPECT_EQ(I->Count, 2u);
}

TEST(NcclBackend, EveryCollcTypeMapsToAnNcclType) {
  for (ElemType T : {ElemType::F32, ElemType::F16, ElemType::BF16, ElemType::F64, ElemType::I8,
                     ElemType::U8, ElemType::I32, ElemType::U32, ElemType::I64, ElemType::U64,
                     ElemType::F8E4M3, ElemType::F8E5M2})
    EXPECT_NE(ncclTypeOf(T), ncclNumTypes) << elemTypeName(T).str();
  EXPECT_EQ(ncclOpOf(ReduceOp::Avg), ncclAvg);
  EXPECT_EQ(ncclOpOf(ReduceOp::PremulSum), ncclNumOps);
}

TEST(NcclBackend, TilesCoverEveryByteOnce) {
  std::vector<CopyTile> Tiles;
  appendTiles(Tiles, 1000, 5000000, 3 * kTileBytes + 17);
  appendTiles(Tiles, 7, 9, 0);
  ASSERT_EQ(Tiles.size(), 4u);
  uint64_t Sum = 0;
  for (size_t I = 0; I != Tiles.size(); ++I) {
    EXPECT_EQ(Tiles[I].Dst, 1000 + I * kTileBytes);
    EXPECT_EQ(Tiles[I].Src - Tiles[I].Dst, 5000000u - 1000u);
    Sum += Tiles[I].Bytes;
  }
  EXPECT_EQ(Sum, 3 * kTileBytes + 17);
}

TEST(NcclBackend, WithoutAGpuTheExecutorSaysSo) {
  if (gpu::whyNoGpu().empty())
    GTEST_SKIP() << "a GPU is present: this checks the error without one";
  auto P = compileProgramText("program @p world(1) {\n  group @dp = world\n"
                            "  %g = compute @g : f32[4]\n  %r = all_reduce sum %g in @dp\n"
                            "  compute @use(%r)\n}\n");
  ASSERT_TRUE(bool(P)) << errorText(P.takeError());
  auto X = NcclExecutor::create(*P, 0);
  ASSERT_FALSE(bool(X));
  EXPECT_NE(errorText(X.takeError()).find("cudaGetDeviceCount"), std::string::npos);
}

TEST(NcclBackend, InProcessIdsServeOneCommunicatorEach) {
  UniqueIdExchange &Ids = inProcessIds();
  auto A = Ids.idFor("test/once", true, 2);
  auto B = Ids.idFor("test/once", false, 2);
  auto C = Ids.idFor("test/once", true, 2); // a new communicator under the same key
  ASSERT_TRUE(A && B && C);
  EXPECT_EQ(0, memcmp(&*A, &*B, sizeof(ncclUniqueId)));
  EXPECT_NE(0, memcmp(&*A, &*C, sizeof(ncclUniqueId)));
}

TEST(NcclBackend, FileIdsAreSharedThroughADirectory) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-ids", Dir));
  auto Minter = createFileIdExchange(std::string(Dir), std::chrono::milliseconds(2000));
  auto Joiner = createFileIdExchange(std::string(Dir), std::chrono::milliseconds(2000));
  auto A = Minter->idFor("run1/@tp/0", true);
  ASSERT_TRUE(bool(A)) << errorText(A.takeError());
  auto B = Joiner->idFor("run1/@tp/0", false);
  ASSERT_TRUE(bool(B)) << errorText(B.takeError());
  EXPECT_EQ(0, memcmp(&*A, &*B, sizeof(ncclUniqueId)));
  // Nobody mints this one: a clear timeout, naming the file.
  auto Lonely = createFileIdExchange(std::string(Dir), std::chrono::milliseconds(50));
  auto C = Lonely->idFor("run1/world", false);
  ASSERT_FALSE(bool(C));
  std::string Text = errorText(C.takeError());
  EXPECT_NE(Text.find("run1_world.id"), std::string::npos) << Text;
  EXPECT_NE(Text.find("within 50 ms"), std::string::npos) << Text;
  llvm::sys::fs::remove_directories(Dir);
}

/// The id gather's words: an id, or only the key a rank needs (so that ranks
/// deriving different keys name each other), and malformed words refused.
TEST(NcclBackend, KeyedIdsRoundTripAndMalformedWordsAreRefused) {
  ncclUniqueId Id;
  memset(&Id, 7, sizeof(Id));
  std::vector<KeyedId> Sent = {{"run/world", Id}, {"run/other", std::nullopt}};
  std::vector<uint32_t> Words = encodeKeyedIds(Sent);
  auto Back = decodeKeyedIds(Words, 3);
  ASSERT_TRUE(bool(Back)) << errorText(Back.takeError());
  ASSERT_EQ(Back->size(), 2u);
  EXPECT_EQ((*Back)[0].Key, "run/world");
  ASSERT_TRUE((*Back)[0].Id.has_value());
  EXPECT_EQ(0, memcmp(&*(*Back)[0].Id, &Id, sizeof(Id)));
  EXPECT_EQ((*Back)[1].Key, "run/other");
  EXPECT_FALSE((*Back)[1].Id.has_value());
  // Cut inside the first id; a flag that is neither 0 nor 1.
  std::vector<uint32_t> Cut(Words.begin(), Words.begin() + 8);
  EXPECT_NE(errorText(decodeKeyedIds(Cut, 3).takeError()).find("rank 3 sent are malformed"),
            std::string::npos);
  std::vector<uint32_t> BadFlag = Words;
  BadFlag[1 + 1 + 3] = 2; // count, key length, 3 key words ("run/world"), flag
  EXPECT_NE(errorText(decodeKeyedIds(BadFlag, 3).takeError()).find("says 2 where 0 or 1"),
            std::string::npos);
}

/// COLLC_TIMEOUT_MS for the length of a test.
struct TimeoutEnvironment {
  explicit TimeoutEnvironment(const char *Value) { setenv(kTimeoutVariable, Value, 1); }
  ~TimeoutEnvironment() { unsetenv(kTimeoutVariable); }
};

TEST(NcclBackend, TheTimeoutVariableReachesEveryWait) {
  TimeoutEnvironment Env("40");
  EXPECT_EQ(NcclExecutorOptions{}.Timeout, std::chrono::milliseconds(40));
  NcclMembership None(nullptr, 0, 1, 0, "none"); // polls and finalize use its timeout
  EXPECT_EQ(None.Timeout, std::chrono::milliseconds(40));
  // A real wait, without a GPU: a unique id nobody writes.
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-timeout", Dir));
  auto Start = std::chrono::steady_clock::now();
  auto Id = createFileIdExchange(std::string(Dir))->idFor("run/world", false);
  auto Waited = std::chrono::steady_clock::now() - Start;
  ASSERT_FALSE(bool(Id));
  std::string Text = errorText(Id.takeError());
  EXPECT_NE(Text.find("within 40 ms"), std::string::npos) << Text;
  EXPECT_LT(Waited, std::chrono::seconds(5));
  llvm::sys::fs::remove_directories(Dir);
}

TEST(NcclBackend, AMalformedTimeoutVariableIsRefusedBeforeAnythingRuns) {
  TimeoutEnvironment Env("5m");
  auto P = compileProgramText("program @p world(1) {\n  group @dp = world\n"
                              "  %g = compute @g : f32[4]\n  %r = all_reduce sum %g in @dp\n"
                              "  compute @use(%r)\n}\n");
  ASSERT_TRUE(bool(P)) << errorText(P.takeError());
  auto X = NcclExecutor::create(*P, 0);
  ASSERT_FALSE(bool(X));
  EXPECT_EQ(errorText(X.takeError()),
            "COLLC_TIMEOUT_MS is '5m': expected a timeout in milliseconds, 1 to 86400000");
}

// --- on a GPU --------------------------------------------------------------------------

/// One device buffer, freed at the end.
struct DeviceBuffer {
  void *Ptr = nullptr;
  uint64_t Bytes = 0;
  explicit DeviceBuffer(uint64_t Bytes) : Bytes(Bytes) {
    EXPECT_EQ(cudaMalloc(&Ptr, std::max<uint64_t>(Bytes, 1)), cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(Ptr); }
  /// Synchronous: the comm streams are non-blocking and do not wait for the
  /// legacy stream the copy runs on.
  void put(const void *Host) {
    cudaMemcpy(Ptr, Host, Bytes, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
  }
  void get(void *Host) const { cudaMemcpy(Host, Ptr, Bytes, cudaMemcpyDeviceToHost); }
};

TEST(GpuComm, AvgAndPremulSumThroughAOneRankCommunicator) {
  REQUIRE_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  auto Id = NcclDriver::groupId({"gpu-test-one-rank"});
  ASSERT_TRUE(bool(Id)) << errorText(Id.takeError());
  auto C = NcclDriver::join(*Id, 1, 0);
  ASSERT_TRUE(bool(C)) << errorText(C.takeError());
  NcclDriver::StreamOwner S = NcclDriver::createStream("test");
  ASSERT_TRUE(S);
  std::vector<float> In(4099);
  for (size_t I = 0; I != In.size(); ++I)
    In[I] = float(I % 97) - 48.0f;
  DeviceBuffer Src(In.size() * 4), Dst(In.size() * 4);
  Src.put(In.data());
  auto E = NcclDriver::elements(ElemType::F32, Src.Bytes);
  ASSERT_TRUE(bool(E));
  auto R = [&](DeviceBuffer &B) { return NcclDriver::resource(B.Ptr, B.Bytes); };

  ASSERT_FALSE(bool(NcclDriver::allReduce(*C, R(Src), R(Dst), *E, ReduceOp::Avg, S->get())));
  ASSERT_FALSE(bool(NcclDriver::synchronize(S->get())));
  std::vector<float> Out(In.size());
  Dst.get(Out.data());
  EXPECT_EQ(0, memcmp(Out.data(), In.data(), In.size() * 4)) << "avg over one rank is identity";

  ASSERT_FALSE(bool(NcclDriver::allReduceScaled(*C, R(Src), R(Dst), *E, ReduceOp::PremulSum,
                                                ElemType::F32, 0.5, S->get())));
  ASSERT_FALSE(bool(NcclDriver::synchronize(S->get())));
  Dst.get(Out.data());
  for (size_t I = 0; I != In.size(); ++I)
    ASSERT_EQ(Out[I], In[I] * 0.5f) << "element " << I;

  // bf16 premul_sum: the factor travels as a bf16 scalar.
  std::vector<uint16_t> Half(1000);
  for (size_t I = 0; I != Half.size(); ++I)
    Half[I] = floatToBf16(float(I % 13) - 6.0f);
  DeviceBuffer HSrc(Half.size() * 2), HDst(Half.size() * 2);
  HSrc.put(Half.data());
  auto HE = NcclDriver::elements(ElemType::BF16, HSrc.Bytes);
  ASSERT_TRUE(bool(HE));
  ASSERT_FALSE(bool(NcclDriver::allReduceScaled(*C, R(HSrc), R(HDst), *HE, ReduceOp::PremulSum,
                                                ElemType::BF16, 0.25, S->get())));
  ASSERT_FALSE(bool(NcclDriver::synchronize(S->get())));
  std::vector<uint16_t> HOut(Half.size());
  HDst.get(HOut.data());
  for (size_t I = 0; I != Half.size(); ++I)
    ASSERT_EQ(bf16ToFloat(HOut[I]), bf16ToFloat(Half[I]) * 0.25f) << "element " << I;
  EXPECT_FALSE(bool(NcclDriver::health(*C)));
}

TEST(GpuComm, SeedCommunicatorOnOneGpu) {
  REQUIRE_GPU();
  auto C = createNcclCommunicator("gpu-test-communicator", 1, 0, /*Device=*/0);
  ASSERT_TRUE(bool(C)) << errorText(C.takeError());
  DeviceBuffer B(64 * 4);
  std::vector<int32_t> In(64, 7), Out(64);
  B.put(In.data());
  ASSERT_FALSE(bool((*C)->allReduce(ReduceOp::Max, ElemType::I32,
                                    {static_cast<uint8_t *>(B.Ptr), B.Bytes})));
  B.get(Out.data());
  EXPECT_EQ(Out, In);
  EXPECT_FALSE(bool((*C)->health()));
}

TEST(GpuPack, PackAndUnpackRoundTrip) {
  REQUIRE_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  int SMs = 1;
  cudaDeviceGetAttribute(&SMs, cudaDevAttrMultiProcessorCount, 0);
  std::mt19937_64 Rng(42);
  // Sizes around the vector and tile boundaries, at odd and even offsets.
  std::vector<uint64_t> Sizes = {1, 15, 16, 17, 4096, 65535, 65536, 65537, 1 << 20, 3000017};
  uint64_t Total = 0;
  for (uint64_t S : Sizes)
    Total += S + 3;
  std::vector<char> Host(Total);
  for (char &C : Host)
    C = char(Rng());
  DeviceBuffer Tensors(Total), Bucket(Total), Back(Total);
  Tensors.put(Host.data());
  cudaMemset(Back.Ptr, 0, Total);
  std::vector<CopyTile> Pack, Unpack;
  uint64_t At = 0, In = 0;
  for (uint64_t S : Sizes) {
    uint64_t Odd = (S % 2) ? 3 : 0; // misalign some sources
    appendTiles(Pack, uint64_t(Bucket.Ptr) + In, uint64_t(Tensors.Ptr) + At + Odd, S);
    appendTiles(Unpack, uint64_t(Back.Ptr) + At + Odd, uint64_t(Bucket.Ptr) + In, S);
    At += S + 3;
    In += S;
  }
  DeviceBuffer PackT(Pack.size() * sizeof(CopyTile)), UnpackT(Unpack.size() * sizeof(CopyTile));
  PackT.put(Pack.data());
  UnpackT.put(Unpack.data());
  ASSERT_EQ(launchCopyTiles(static_cast<CopyTile *>(PackT.Ptr), Pack.size(), SMs, nullptr),
            cudaSuccess);
  ASSERT_EQ(launchCopyTiles(static_cast<CopyTile *>(UnpackT.Ptr), Unpack.size(), SMs, nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<char> Out(Total);
  Back.get(Out.data());
  At = 0;
  for (uint64_t S : Sizes) {
    uint64_t Odd = (S % 2) ? 3 : 0;
    ASSERT_EQ(0, memcmp(Out.data() + At + Odd, Host.data() + At + Odd, S)) << S << " bytes";
    At += S + 3;
  }
}

/// Every kind of call the lowering makes on one rank: a fused bucket with
/// packs, premul_sum, all_gather, broadcast, all_to_all, both kinds of
/// all_to_all_v (the runtime one runs eagerly between two graphs),
/// reduce_scatter and a barrier.
const char *EveryCall = R"(program @gpu_every_call world(1) {
  group @dp = world
  %g1 = compute @bwd.l1 cost(50us) stream(1) : f32[1024]
  %g0 = compute @bwd.l0 cost(50us) stream(1) : f32[256]
  %h = compute @half cost(10us) : bf16[64, 8]
  %c = compute @route cost(1us) : i64[1]
  %r1 = all_reduce async avg %g1 in @dp
  %r0 = all_reduce async avg %g0 in @dp
  wait %r1
  wait %r0
  %p = all_reduce premul_sum(0.25) %h in @dp
  %ag = all_gather %p in @dp
  %bc = broadcast %g0 root 0 in @dp
  %aa = all_to_all %h in @dp
  %w = all_to_all_v %h in @dp splits [[48]] : bf16[64, 8]
  %v = all_to_all_v %h in @dp splits %c : bf16[64, 8]
  %rs = reduce_scatter max %g1 in @dp
  barrier in @dp
  %o = compute @opt(%r1, %r0, %ag, %bc, %aa, %w, %v, %rs) cost(20us) : f32[4]
}
)";

TEST(GpuCapture, CaptureAndReplayMatchEagerAndTheReference) {
  REQUIRE_GPU();
  auto P = compileProgramText(EveryCall);
  ASSERT_TRUE(bool(P)) << errorText(P.takeError());
  auto X = NcclExecutor::create(*P, 0);
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  gpu::DeviceTensors Mem;
  ASSERT_FALSE(bool(Mem.bindAll(*P, **X)));
  EXPECT_EQ((*X)->rankPlan().Graphs, 2u) << "the runtime all_to_all_v splits the step";
  ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));

  ASSERT_FALSE(bool((*X)->runEager()));
  ASSERT_FALSE(bool((*X)->synchronize()));
  auto Eager = gpu::readOutputs(*P, 0, **X);
  auto EagerCheck = gpu::checkOutputs(*P, Eager);
  ASSERT_TRUE(bool(EagerCheck)) << errorText(EagerCheck.takeError());

  for (int Step = 0; Step != 3; ++Step) {
    // Zero the outputs, restore the inputs, replay the graphs.
    ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));
    ASSERT_FALSE(bool((*X)->replayGraphs()));
    ASSERT_FALSE(bool((*X)->synchronize()));
    auto Replayed = gpu::readOutputs(*P, 0, **X);
    ASSERT_EQ(Replayed.size(), Eager.size());
    for (auto &[T, Bytes] : Eager)
      EXPECT_EQ(Replayed[T], Bytes) << "%" << P->Tensors[T].Name << " differs after replay "
                                    << Step;
  }
  EXPECT_EQ((*X)->steps(), 4u);
  EXPECT_FALSE(bool((*X)->health()));
  ASSERT_FALSE((*X)->notes().empty());
  EXPECT_NE((*X)->notes()[0].find("no inter-rank path"), std::string::npos);
}

TEST(GpuCapture, RebindingRecapturesWithTheNewPointers) {
  REQUIRE_GPU();
  auto P = compileProgramText(EveryCall);
  ASSERT_TRUE(bool(P));
  auto X = NcclExecutor::create(*P, 0, {.CommPrefix = "rebind"});
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  gpu::DeviceTensors First, Second;
  ASSERT_FALSE(bool(First.bindAll(*P, **X)));
  ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));
  ASSERT_FALSE(bool((*X)->replayGraphs()));
  ASSERT_FALSE(bool((*X)->synchronize()));
  // Bind every bound tensor again, elsewhere.
  for (size_t T = 0; T != P->Tensors.size(); ++T) {
    auto Dev = (*X)->tensor(P->Tensors[T].Name);
    if (!Dev) {
      llvm::consumeError(Dev.takeError());
      continue;
    }
    void *Fresh = nullptr;
    uint64_t Bytes = uint64_t(P->Tensors[T].Type.bytes());
    ASSERT_EQ(cudaMalloc(&Fresh, std::max<uint64_t>(Bytes, 1)), cudaSuccess);
    Second.Owned.push_back(Fresh);
    if (llvm::Error E = (*X)->bind(P->Tensors[T].Name, Fresh, Bytes)) {
      // Views are not bound; they stay where they are.
      EXPECT_NE(errorText(std::move(E)).find("zero-copy view"), std::string::npos);
    }
  }
  ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));
  ASSERT_FALSE(bool((*X)->replayGraphs()));
  ASSERT_FALSE(bool((*X)->synchronize()));
  auto Got = gpu::readOutputs(*P, 0, **X);
  auto Result = gpu::checkOutputs(*P, Got);
  EXPECT_TRUE(bool(Result)) << errorText(Result.takeError());
}

TEST(GpuCapture, CapturesIntoTheCallersGraph) {
  REQUIRE_GPU();
  // No runtime split sizes: the whole step can live in the caller's graph.
  auto P = compileProgramText(R"(program @gpu_caller world(1) {
  group @dp = world
  %a = compute @a : f32[4096]
  %b = compute @b : f32[100]
  %ra = all_reduce sum %a in @dp
  %rb = all_reduce sum %b in @dp
  compute @use(%ra, %rb)
}
)");
  ASSERT_TRUE(bool(P)) << errorText(P.takeError());
  auto X = NcclExecutor::create(*P, 0, {.CommPrefix = "caller"});
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  gpu::DeviceTensors Mem;
  ASSERT_FALSE(bool(Mem.bindAll(*P, **X)));
  ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));
  // Connect first, as a framework warms up before it captures.
  ASSERT_FALSE(bool((*X)->runEager()));
  ASSERT_FALSE(bool((*X)->synchronize()));
  cudaStream_t Caller;
  ASSERT_EQ(cudaStreamCreateWithFlags(&Caller, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t Graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(Caller, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  llvm::Error E = (*X)->enqueueInto(Caller);
  ASSERT_EQ(cudaStreamEndCapture(Caller, &Graph), cudaSuccess);
  ASSERT_FALSE(bool(E)) << errorText(std::move(E));
  cudaGraphExec_t Exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&Exec, Graph, 0), cudaSuccess);
  ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));
  ASSERT_EQ(cudaGraphLaunch(Exec, Caller), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(Caller), cudaSuccess);
  auto Got = gpu::readOutputs(*P, 0, **X);
  auto Result = gpu::checkOutputs(*P, Got);
  EXPECT_TRUE(bool(Result)) << errorText(Result.takeError());
  cudaGraphExecDestroy(Exec);
  cudaGraphDestroy(Graph);
  cudaStreamDestroy(Caller);
}

/// The contract of enqueueInto inside a framework's capture: the model's
/// producer kernel runs on its own stream and records the ready event, the
/// step is captured into the caller's graph, and a consumer kernel on a
/// third stream waits on the done event. Both events are then captured
/// events: the comm stream must wait on the ready event, and the done event
/// must be recorded, as plain captured calls (the external flags of collc's
/// own graphs would leave the producer and the consumer unordered). The
/// premul_sum is a real node of the graph (NCCL's one-rank kernel).
TEST(GpuCapture, ProducerStepAndConsumerInTheCallersGraph) {
  REQUIRE_GPU();
  auto P = compileProgramText(R"(program @gpu_foreign world(1) {
  group @dp = world
  %a = compute @produce : f32[65537]
  %r = all_reduce premul_sum(0.5) %a in @dp
  compute @consume(%r)
}
)");
  ASSERT_TRUE(bool(P)) << errorText(P.takeError());
  auto X = NcclExecutor::create(*P, 0, {.CommPrefix = "foreign"});
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  gpu::DeviceTensors Mem;
  ASSERT_FALSE(bool(Mem.bindAll(*P, **X)));
  auto A = (*X)->tensor("a"), R = (*X)->tensor("r");
  ASSERT_TRUE(A && R);
  auto Ready = (*X)->readyEvent("produce");
  auto Done = (*X)->doneEvent("r");
  ASSERT_TRUE(Ready && Done);
  const uint32_t N = 65537;
  DeviceBuffer Out(N * 4);
  // One step outside any capture first (handshake, connections, tables).
  ASSERT_FALSE(bool((*X)->runEager()));
  ASSERT_FALSE(bool((*X)->synchronize()));

  cudaStream_t Caller, Compute, Consumer;
  cudaEvent_t Forked, ComputeBack, ConsumerBack;
  for (cudaStream_t *S : {&Caller, &Compute, &Consumer})
    ASSERT_EQ(cudaStreamCreateWithFlags(S, cudaStreamNonBlocking), cudaSuccess);
  for (cudaEvent_t *E : {&Forked, &ComputeBack, &ConsumerBack})
    ASSERT_EQ(cudaEventCreateWithFlags(E, cudaEventDisableTiming), cudaSuccess);
  cudaGraph_t Graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(Caller, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  cudaEventRecord(Forked, Caller);
  cudaStreamWaitEvent(Compute, Forked, 0);
  cudaError_t Produced = gpu::launchProduce(reinterpret_cast<float *>(A->data()), N, Compute);
  cudaEventRecord(*Ready, Compute);
  llvm::Error E = (*X)->enqueueInto(Caller);
  cudaStreamWaitEvent(Consumer, *Done, 0);
  cudaError_t Consumed =
      gpu::launchConsume(reinterpret_cast<const float *>(R->data()), static_cast<float *>(Out.Ptr), N, Consumer);
  cudaEventRecord(ConsumerBack, Consumer);
  cudaEventRecord(ComputeBack, Compute);
  cudaStreamWaitEvent(Caller, ConsumerBack, 0);
  cudaStreamWaitEvent(Caller, ComputeBack, 0);
  cudaError_t Ended = cudaStreamEndCapture(Caller, &Graph);
  ASSERT_FALSE(bool(E)) << errorText(std::move(E));
  ASSERT_EQ(Produced, cudaSuccess);
  ASSERT_EQ(Consumed, cudaSuccess);
  ASSERT_EQ(Ended, cudaSuccess) << cudaGetErrorString(Ended);
  cudaGraphExec_t Exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&Exec, Graph, 0), cudaSuccess);

  std::vector<float> Want(N), Got(N);
  for (uint32_t I = 0; I != N; ++I)
    Want[I] = gpu::consumedValue(gpu::producedValue(I) * 0.5f);
  for (int Launch = 0; Launch != 2; ++Launch) {
    // Everything the graph writes starts as zeros.
    ASSERT_EQ(cudaMemset(A->data(), 0, N * 4), cudaSuccess);
    ASSERT_EQ(cudaMemset(R->data(), 0, N * 4), cudaSuccess);
    ASSERT_EQ(cudaMemset(Out.Ptr, 0, N * 4), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(Exec, Caller), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(Caller), cudaSuccess);
    Out.get(Got.data());
    ASSERT_EQ(0, memcmp(Got.data(), Want.data(), N * 4))
        << "launch " << Launch << ": first element " << Got[0] << ", expected " << Want[0];
  }
  EXPECT_FALSE(bool((*X)->health()));
  cudaGraphExecDestroy(Exec);
  cudaGraphDestroy(Graph);
  for (cudaEvent_t Ev : {Forked, ComputeBack, ConsumerBack})
    cudaEventDestroy(Ev);
  for (cudaStream_t S : {Caller, Compute, Consumer})
    cudaStreamDestroy(S);
}

TEST(GpuCapture, RefusesWhatItCannotDo) {
  REQUIRE_GPU();
  auto P = compileProgramText(EveryCall);
  ASSERT_TRUE(bool(P));
  auto X = NcclExecutor::create(*P, 0, {.CommPrefix = "refusals"});
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  // Nothing bound yet: capture names what is missing.
  llvm::Error E = (*X)->capture();
  ASSERT_TRUE(bool(E));
  EXPECT_NE(errorText(std::move(E)).find("tensors are not bound"), std::string::npos);
  // A wrong size and an unknown name.
  std::string Unbound = (*X)->unboundTensors().front();
  DeviceBuffer B(3);
  EXPECT_NE(errorText((*X)->bind(Unbound, B.Ptr, 3)).find("3 bytes were bound"),
            std::string::npos);
  EXPECT_NE(errorText((*X)->bind("nope", B.Ptr, 3)).find("has no tensor %nope"),
            std::string::npos);
  // A runtime all_to_all_v cannot be part of a caller's graph.
  gpu::DeviceTensors Mem;
  ASSERT_FALSE(bool(Mem.bindAll(*P, **X)));
  cudaStream_t Caller;
  ASSERT_EQ(cudaStreamCreateWithFlags(&Caller, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t Graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(Caller, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  llvm::Error Refused = (*X)->enqueueInto(Caller);
  cudaStreamEndCapture(Caller, &Graph);
  if (Graph)
    cudaGraphDestroy(Graph);
  cudaGetLastError();
  ASSERT_TRUE(bool(Refused));
  EXPECT_NE(errorText(std::move(Refused)).find("cannot be part of a captured graph"),
            std::string::npos);
  cudaStreamDestroy(Caller);
  // Bound now: it captures.
  EXPECT_FALSE(bool((*X)->capture()));
}

/// A compute callback that enqueues nothing.
llvm::Error noCompute(const plan::Compute &, uint32_t) { return llvm::Error::success(); }

/// A step that cannot finish in time (here: queued behind a kernel that
/// holds the caller's stream for 3 s, as a collective waiting on a dead
/// peer would) times synchronize() out at the executor's 300 ms: the
/// executor breaks, its graphs before its communicators, and returns once
/// the held work has drained. NCCL 2.28's abort waits until no CUDA graph
/// holds the communicator, so the other order (the communicators aborted
/// while the executor still held its graphs) never returns. Every later
/// path refuses, naming why (issue 36, item 1).
TEST(GpuCapture, ATimedOutStepBreaksTheExecutorAndReturns) {
  REQUIRE_GPU();
  auto P = compileProgramText(R"(program @gpu_broken world(1) {
  group @dp = world
  %a = compute @a : f32[4096]
  %r = all_reduce sum %a in @dp
  compute @use(%r)
}
)");
  ASSERT_TRUE(bool(P)) << errorText(P.takeError());
  NcclExecutorOptions Opts;
  Opts.CommPrefix = "broken";
  Opts.Timeout = std::chrono::milliseconds(300);
  auto X = NcclExecutor::create(*P, 0, Opts);
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  gpu::DeviceTensors Mem;
  ASSERT_FALSE(bool(Mem.bindAll(*P, **X)));
  ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));
  cudaStream_t Caller;
  ASSERT_EQ(cudaStreamCreateWithFlags(&Caller, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_FALSE(bool((*X)->setStream(Caller)));
  ASSERT_FALSE(bool((*X)->replay(noCompute)));
  ASSERT_FALSE(bool((*X)->synchronize()));

  ASSERT_EQ(gpu::launchHold(3000, Caller), cudaSuccess);
  ASSERT_FALSE(bool((*X)->replay(noCompute))); // its graph waits behind the hold
  auto Start = std::chrono::steady_clock::now();
  llvm::Error TimedOut = (*X)->synchronize();
  auto Took = std::chrono::steady_clock::now() - Start;
  ASSERT_TRUE(bool(TimedOut));
  EXPECT_NE(errorText(std::move(TimedOut)).find("was not done after 300 ms"), std::string::npos);
  EXPECT_LT(Took, std::chrono::seconds(20)) << "the abort waited for a graph the executor held";

  std::vector<llvm::Error> Refusals;
  Refusals.push_back((*X)->replay(noCompute));
  Refusals.push_back((*X)->runEager());
  Refusals.push_back((*X)->enqueueInto(Caller));
  Refusals.push_back((*X)->capture());
  for (llvm::Error &Refused : Refusals) {
    ASSERT_TRUE(bool(Refused));
    EXPECT_NE(errorText(std::move(Refused)).find("its communicators were aborted after"),
              std::string::npos);
  }
  std::vector<char> Host(4096 * 4);
  EXPECT_NE(errorText((*X)->copyOut(0, Host)).find("refusing to copy out of %"),
            std::string::npos);
  EXPECT_TRUE(bool((*X)->health()));
  ASSERT_EQ(cudaStreamSynchronize(Caller), cudaSuccess);
  X->reset(); // returns: nothing is left to wait for
  cudaStreamDestroy(Caller);
}

/// Rebinding while a step is still queued: the old tile tables are freed
/// in the comm stream's order, after that step, and the new ones made
/// there (after a bounded wait), so the queued step reads what it was
/// captured with and the next one the new bindings (issue 36, item 4).
TEST(GpuCapture, RebindingWhileAStepIsInFlight) {
  REQUIRE_GPU();
  auto P = compileProgramText(EveryCall);
  ASSERT_TRUE(bool(P));
  auto X = NcclExecutor::create(*P, 0, {.CommPrefix = "rebind-in-flight"});
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  gpu::DeviceTensors First, Second;
  ASSERT_FALSE(bool(First.bindAll(*P, **X)));
  std::vector<std::string> Bound;
  for (const plan::Tensor &T : P->Tensors) {
    auto Dev = (*X)->tensor(T.Name);
    if (!Dev) {
      llvm::consumeError(Dev.takeError());
      continue;
    }
    void *Fresh = nullptr; // made before the hold: cudaMalloc may synchronize
    ASSERT_EQ(cudaMalloc(&Fresh, std::max<size_t>(Dev->size(), 1)), cudaSuccess);
    Second.Owned.push_back(Fresh);
    Bound.push_back(T.Name);
  }
  cudaStream_t Caller, Own;
  ASSERT_EQ(cudaStreamCreateWithFlags(&Caller, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&Own, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_FALSE(bool((*X)->setStream(Caller)));
  ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));
  ASSERT_FALSE(bool((*X)->replay(noCompute)));
  ASSERT_FALSE(bool((*X)->synchronize()));

  ASSERT_EQ(gpu::launchHold(1000, Caller), cudaSuccess);
  ASSERT_FALSE(bool((*X)->replay(noCompute))); // queued behind the hold
  for (size_t I = 0; I != Bound.size(); ++I) {
    if (llvm::Error E = (*X)->bind(Bound[I], Second.Owned[I],
                                   uint64_t((*X)->tensor(Bound[I])->size()))) {
      EXPECT_NE(errorText(std::move(E)).find("zero-copy view"), std::string::npos);
    }
  }
  // The new memory's zeroed outputs and its inputs, on a stream of their
  // own (the caller's is held).
  for (const plan::Comm &C : P->Comms)
    for (uint32_t T : C.Outputs) {
      auto Dev = (*X)->tensor(P->Tensors[T].Name);
      ASSERT_TRUE(bool(Dev));
      ASSERT_EQ(cudaMemsetAsync(Dev->data(), 0, Dev->size(), Own), cudaSuccess);
    }
  for (uint32_t T : gpu::computeOutputs(*P)) {
    auto Dev = (*X)->tensor(P->Tensors[T].Name);
    if (!Dev) {
      llvm::consumeError(Dev.takeError());
      continue;
    }
    std::vector<char> In(Dev->size());
    rt::fillSynthetic(*P, T, 0, In);
    ASSERT_EQ(cudaMemcpyAsync(Dev->data(), In.data(), In.size(), cudaMemcpyHostToDevice, Own),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(Own), cudaSuccess);
  }
  ASSERT_FALSE(bool((*X)->replay(noCompute))); // waits, re-uploads, re-captures
  ASSERT_FALSE(bool((*X)->synchronize()));
  auto Got = gpu::readOutputs(*P, 0, **X);
  auto Result = gpu::checkOutputs(*P, Got);
  EXPECT_TRUE(bool(Result)) << errorText(Result.takeError());
  cudaStreamDestroy(Own);
  cudaStreamDestroy(Caller);
}

TEST(GpuCapture, OneGpuPerCapturingThread) {
  REQUIRE_GPU();
  int Devices = 0;
  cudaGetDeviceCount(&Devices);
  if (Devices < 2)
    GTEST_SKIP() << "needs two GPUs: this machine has " << Devices;
  auto P = compileProgramText(EveryCall);
  ASSERT_TRUE(bool(P));
  auto X = NcclExecutor::create(*P, 0, {.Device = 0, .CommPrefix = "first-gpu"});
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  gpu::DeviceTensors Mem;
  ASSERT_FALSE(bool(Mem.bindAll(*P, **X)));
  ASSERT_FALSE(bool((*X)->capture()));
  auto Y = NcclExecutor::create(*P, 0, {.Device = 1, .CommPrefix = "second-gpu"});
  ASSERT_TRUE(bool(Y)) << errorText(Y.takeError());
  gpu::DeviceTensors Mem2;
  ASSERT_FALSE(bool(Mem2.bindAll(*P, **Y)));
  EXPECT_NE(errorText((*Y)->capture()).find("one GPU per capturing thread"), std::string::npos);
}

// --- NCCL's group launch --------------------------------------------------------------
// On one rank every collective takes NCCL's one-rank shortcut (a copy, a
// premul kernel, or nothing); a send and a receive to self are the calls that
// go through ncclGroupEnd's launch and NCCL's proxy.

TEST(GpuSendRecv, ToSelfThroughTheGroupLaunch) {
  REQUIRE_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  auto Id = NcclDriver::groupId({"gpu-test-send-recv"});
  ASSERT_TRUE(bool(Id)) << errorText(Id.takeError());
  auto C = NcclDriver::join(*Id, 1, 0);
  ASSERT_TRUE(bool(C)) << errorText(C.takeError());
  NcclDriver::StreamOwner S = NcclDriver::createStream("test");
  ASSERT_TRUE(S);
  std::vector<int32_t> In(100003), Out(In.size(), 0);
  for (size_t I = 0; I != In.size(); ++I)
    In[I] = int32_t(I * 2654435761u);
  DeviceBuffer Src(In.size() * 4), Dst(In.size() * 4);
  Src.put(In.data());
  Dst.put(Out.data());
  uint64_t Count = In.size();
  ASSERT_FALSE(bool(NcclDriver::allToAllV(*C, NcclDriver::resource(Src.Ptr, Src.Bytes),
                                          NcclDriver::resource(Dst.Ptr, Dst.Bytes),
                                          ElemType::I32, {Count}, {Count}, S->get())));
  ASSERT_FALSE(bool(NcclDriver::synchronize(S->get())));
  Dst.get(Out.data());
  EXPECT_EQ(Out, In);
  EXPECT_FALSE(bool(NcclDriver::health(*C)));
}

/// A static all_to_all_v on one rank is a grouped send and receive to self,
/// captured in collc's graph and replayed.
TEST(GpuSendRecv, StaticAllToAllVReplayed) {
  REQUIRE_GPU();
  auto P = compileProgramText(R"(program @gpu_self world(1) {
  group @dp = world
  %h = compute @h : i32[256, 16]
  %w = all_to_all_v %h in @dp splits [[200]] : i32[256, 16]
  compute @use(%w)
}
)");
  ASSERT_TRUE(bool(P)) << errorText(P.takeError());
  auto X = NcclExecutor::create(*P, 0, {.CommPrefix = "self"});
  ASSERT_TRUE(bool(X)) << errorText(X.takeError());
  gpu::DeviceTensors Mem;
  ASSERT_FALSE(bool(Mem.bindAll(*P, **X)));
  for (int Step = 0; Step != 2; ++Step) {
    ASSERT_FALSE(bool(gpu::resetTensors(*P, 0, **X)));
    ASSERT_FALSE(bool((*X)->replayGraphs()));
    ASSERT_FALSE(bool((*X)->synchronize()));
    auto Got = gpu::readOutputs(*P, 0, **X);
    auto Result = gpu::checkOutputs(*P, Got);
    EXPECT_TRUE(bool(Result)) << "step " << Step << ": " << errorText(Result.takeError());
  }
}

} // namespace
