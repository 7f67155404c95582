//===- tests/gpu/CApiNcclTest.cpp - collc.h's nccl backend on a GPU -------===//
//
// The C API's nccl executor through libcollc.so only (CUDA's runtime for the
// model's memory and stream): one rank, since NCCL refuses two ranks on one
// GPU. Without a GPU each test reports itself skipped with the reason; the
// refusals that need none are tests/api/ExecutorApiTest.cpp's.
//
//===----------------------------------------------------------------------===//

#include "collc/collc.h"

#include <cuda_runtime_api.h>

#include "gtest/gtest.h"

#include <cstdlib>
#include <string>
#include <vector>

namespace {

/// Why this machine cannot run the tests, or "".
std::string whyNoGpu() {
  int Count = 0;
  cudaError_t E = cudaGetDeviceCount(&Count);
  if (E != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA GPU: cudaGetDeviceCount failed with ") + cudaGetErrorName(E);
  }
  return Count ? "" : "no CUDA GPU: cudaGetDeviceCount found 0 devices";
}

#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    std::string Why = whyNoGpu();                                                                  \
    if (!Why.empty())                                                                              \
      GTEST_SKIP() << Why;                                                                         \
  } while (0)

#define ASSERT_OK(X) ASSERT_EQ((X), collcSuccess) << collcGetLastError()
#define ASSERT_CUDA(X) ASSERT_EQ((X), cudaSuccess) << #X

constexpr int kElems = 1024;
const char *OneRank = R"(program @one world(1) {
  group @dp = world
  %a = compute @fwd cost(1us) : f32[1024]
  %r = all_reduce sum %a in @dp
  compute @use(%r) cost(1us)
}
)";

/// An nccl executor of rank 0 of OneRank, its ids met in a fresh directory.
struct OneRankExecutor {
  collcPlan_t P = nullptr;
  collcExecutor_t X = nullptr;
  std::string Dir;
  collcResult_t create() {
    collcCompileOptions_t C;
    collcCompileOptionsInit(&C);
    C.bucketPolicy = "none";
    if (collcResult_t E = collcCompile(OneRank, &C, &P))
      return E;
    char Tmpl[] = "/tmp/collc-capi-nccl.XXXXXX";
    Dir = mkdtemp(Tmpl) ? std::string(Tmpl) : "/tmp";
    std::string Rendezvous = "file:" + Dir;
    collcExecutorOptions_t O;
    collcExecutorOptionsInit(&O);
    O.backend = "nccl";
    O.rendezvous = Rendezvous.c_str();
    O.timeoutMs = 20000;
    return collcExecutorCreate(P, 0, &O, &X);
  }
  ~OneRankExecutor() {
    collcExecutorDestroy(X);
    collcPlanDestroy(P);
  }
};

TEST(GpuCApi, OneRankAllReduceReplaysBetweenTheCallersStreamWork) {
  SKIP_WITHOUT_GPU();
  OneRankExecutor R;
  ASSERT_OK(R.create());
  void *A = nullptr, *Out = nullptr;
  ASSERT_CUDA(cudaMalloc(&A, kElems * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&Out, kElems * sizeof(float)));
  cudaStream_t S = nullptr;
  ASSERT_CUDA(cudaStreamCreateWithFlags(&S, cudaStreamNonBlocking));
  ASSERT_OK(collcExecutorBindDevice(R.X, "a", A, kElems * sizeof(float)));
  ASSERT_OK(collcExecutorBindDevice(R.X, "r", Out, kElems * sizeof(float)));
  void *Where = nullptr;
  size_t Bytes = 0;
  ASSERT_OK(collcExecutorTensor(R.X, "r", &Where, &Bytes));
  EXPECT_EQ(Where, Out);
  EXPECT_EQ(Bytes, kElems * sizeof(float));
  ASSERT_OK(collcExecutorSetStream(R.X, S));
  ASSERT_OK(collcExecutorCapture(R.X));
  std::vector<float> In(kElems), Got(kElems);
  for (int Step = 0; Step != 3; ++Step) {
    for (int I = 0; I != kElems; ++I)
      In[I] = float(Step * 1000 + I);
    // The model's work on its stream; the step is ordered after it, and the
    // copy back after the step, by the executor's events alone.
    ASSERT_CUDA(cudaMemcpyAsync(A, In.data(), kElems * sizeof(float), cudaMemcpyHostToDevice, S));
    ASSERT_OK(collcExecutorReplay(R.X, nullptr, nullptr));
    ASSERT_CUDA(
        cudaMemcpyAsync(Got.data(), Out, kElems * sizeof(float), cudaMemcpyDeviceToHost, S));
    ASSERT_OK(collcExecutorSynchronize(R.X, 10000));
    ASSERT_CUDA(cudaStreamSynchronize(S));
    for (int I = 0; I != kElems; ++I)
      ASSERT_EQ(Got[I], In[I]) << "step " << Step << " element " << I << " (a world of one)";
  }
  cudaFree(A);
  cudaFree(Out);
  cudaStreamDestroy(S);
}

TEST(GpuCApi, AnNcclExecutorRefusesHostMemoryAndAMissingStreamAndCallsItsComputes) {
  SKIP_WITHOUT_GPU();
  OneRankExecutor R;
  ASSERT_OK(R.create());
  collcMemory_t Memory = collcMemoryHost;
  ASSERT_OK(collcExecutorMemory(R.X, &Memory));
  EXPECT_EQ(Memory, collcMemoryDevice);
  float Host[kElems];
  EXPECT_EQ(collcExecutorBind(R.X, "a", Host, sizeof Host), collcInvalidUsage);
  EXPECT_NE(std::string(collcGetLastError()).find("expected collcExecutorBindDevice"),
            std::string::npos)
      << collcGetLastError();
  void *A = nullptr, *Out = nullptr;
  ASSERT_CUDA(cudaMalloc(&A, kElems * sizeof(float)));
  ASSERT_CUDA(cudaMalloc(&Out, kElems * sizeof(float)));
  ASSERT_OK(collcExecutorBindDevice(R.X, "a", A, kElems * sizeof(float)));
  ASSERT_OK(collcExecutorBindDevice(R.X, "r", Out, kElems * sizeof(float)));
  EXPECT_EQ(collcExecutorCapture(R.X), collcInvalidUsage);
  EXPECT_NE(std::string(collcGetLastError()).find("expected collcExecutorSetStream"),
            std::string::npos)
      << collcGetLastError();
  EXPECT_EQ(collcExecutorSetStream(R.X, nullptr), collcInvalidArgument);
  ASSERT_OK(collcExecutorSetStream(R.X, cudaStreamPerThread));
  ASSERT_OK(collcExecutorCapture(R.X));
  // As on every backend, the step calls each compute of the rank in plan
  // order; on a device the callback enqueues the model's work on the stream.
  std::vector<std::string> Called;
  auto Compute = [](const char *Name, uint32_t, void *User) {
    static_cast<std::vector<std::string> *>(User)->push_back(Name);
    return collcSuccess;
  };
  ASSERT_OK(collcExecutorReplay(R.X, Compute, &Called));
  EXPECT_EQ(Called, (std::vector<std::string>{"fwd", "use"}));
  ASSERT_OK(collcExecutorReplay(R.X, nullptr, nullptr));
  ASSERT_OK(collcExecutorSynchronize(R.X, 10000));
  cudaFree(A);
  cudaFree(Out);
}

} // namespace
