// collc_gpu_bench: the NCCL backend on one GPU, every figure side by side
// with its baseline in the same run.
//  1. Host time per step: the plan's calls issued eagerly (one NCCL call,
//     pack kernel, event at a time) against one cudaGraphLaunch per graph,
//     on the GPT-2 DDP plan (compiled for one rank), on a plan of 1000
//     unfused 4 KiB all_reduces, and on 64 static all_to_all_v (each a
//     grouped send and receive to self). Host time is what the issuing
//     thread spends before it may return to the model; the step is
//     synchronized (untimed) before the next one. On one GPU every NCCL
//     collective takes NCCL's one-rank shortcut (a copy, a premul kernel, or
//     nothing): those rows time collc's issue path against a graph launch,
//     not NCCL's group launch. Send/recv have no shortcut: the all_to_all_v
//     row goes through ncclGroupEnd's launch and NCCL's proxy.
//  2. Pack/unpack bandwidth (one launch per bucket, 64 tensors per bucket)
//     against cudaMemcpy device-to-device of the same bytes.
// Without a GPU it says so and exits 0. --version prints the NCCL this
// process loaded, and from where (no GPU needed: the device check's
// preflight); --timeout-ms bounds every wait (as COLLC_TIMEOUT_MS does).
//
//   collc_gpu_bench [--steps N] [--examples DIR] [--timeout-ms MS] [--version]
#include "GpuTestUtil.h"

#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/PackKernels.h"
#include "runtime/exec/Timeout.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <dlfcn.h>

using namespace collc;
using namespace collc::rt;
using namespace collc::rt::nccl;
using llvm::formatv;
using llvm::outs;

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds Timeout = defaultTimeout();

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

struct StepTimes {
  double EagerHostUs, GraphHostUs, EagerStepUs, GraphStepUs;
  unsigned NcclCalls, Graphs;
};

/// Issues \p Steps steps each way; host and whole-step medians.
llvm::Expected<StepTimes> timeSteps(const plan::Plan &P, unsigned Steps, const char *Prefix) {
  auto X = NcclExecutor::create(P, 0, {.CommPrefix = Prefix, .Timeout = Timeout});
  if (!X)
    return X.takeError();
  gpu::DeviceTensors Mem;
  if (llvm::Error E = Mem.bindAll(P, **X))
    return E;
  if (llvm::Error E = gpu::fillInputs(P, 0, **X))
    return E;
  if (llvm::Error E = (*X)->capture())
    return E;
  StepTimes T{};
  for (const Call &C : (*X)->rankPlan().Capture)
    T.NcclCalls += C.Kind >= CallKind::AllReduce && C.Kind <= CallKind::Recv;
  T.Graphs = (*X)->rankPlan().Graphs;
  for (bool Graph : {false, true}) {
    std::vector<double> Host, Whole;
    for (unsigned S = 0; S != Steps + 3; ++S) {
      auto T0 = Clock::now();
      if (llvm::Error E = Graph ? (*X)->replayGraphs() : (*X)->runEager())
        return E;
      auto T1 = Clock::now();
      if (llvm::Error E = (*X)->synchronize())
        return E;
      auto T2 = Clock::now();
      if (S < 3)
        continue; // warm
      Host.push_back(std::chrono::duration<double, std::micro>(T1 - T0).count());
      Whole.push_back(std::chrono::duration<double, std::micro>(T2 - T0).count());
    }
    (Graph ? T.GraphHostUs : T.EagerHostUs) = median(Host);
    (Graph ? T.GraphStepUs : T.EagerStepUs) = median(Whole);
  }
  return T;
}

struct CopyRates {
  uint64_t Bytes;
  double PackGBs, UnpackGBs, MemcpyGBs;
};

llvm::Expected<CopyRates> timeCopies(uint64_t Bytes, int SMs) {
  const unsigned Tensors = 64;
  uint64_t Each = Bytes / Tensors / 16 * 16;
  Bytes = Each * Tensors;
  void *SrcV = nullptr, *BucketV = nullptr;
  if (cudaMalloc(&SrcV, Bytes) != cudaSuccess || cudaMalloc(&BucketV, Bytes) != cudaSuccess)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cudaMalloc of %llu bytes",
                                   (unsigned long long)Bytes);
  char *Src = static_cast<char *>(SrcV), *Bucket = static_cast<char *>(BucketV);
  cudaMemset(Src, 1, Bytes);
  // Tensors in reverse order, as a backward pass makes gradients.
  std::vector<CopyTile> Pack, Unpack;
  for (unsigned I = 0; I != Tensors; ++I) {
    uint64_t At = uint64_t(Tensors - 1 - I) * Each;
    appendTiles(Pack, uint64_t(Bucket) + uint64_t(I) * Each, uint64_t(Src) + At, Each);
    appendTiles(Unpack, uint64_t(Src) + At, uint64_t(Bucket) + uint64_t(I) * Each, Each);
  }
  void *PackV = nullptr, *UnpackV = nullptr;
  cudaMalloc(&PackV, Pack.size() * sizeof(CopyTile));
  cudaMalloc(&UnpackV, Unpack.size() * sizeof(CopyTile));
  auto *PackT = static_cast<CopyTile *>(PackV), *UnpackT = static_cast<CopyTile *>(UnpackV);
  cudaMemcpy(PackT, Pack.data(), Pack.size() * sizeof(CopyTile), cudaMemcpyHostToDevice);
  cudaMemcpy(UnpackT, Unpack.data(), Unpack.size() * sizeof(CopyTile), cudaMemcpyHostToDevice);
  cudaEvent_t A, B;
  cudaEventCreate(&A);
  cudaEventCreate(&B);
  auto Rate = [&](auto &&Launch) {
    std::vector<double> GBs;
    for (int I = 0; I != 25; ++I) {
      cudaEventRecord(A, nullptr);
      Launch();
      cudaEventRecord(B, nullptr);
      cudaEventSynchronize(B);
      float Ms = 0;
      cudaEventElapsedTime(&Ms, A, B);
      if (I >= 5)
        GBs.push_back(double(Bytes) / (double(Ms) * 1e6));
    }
    return median(GBs);
  };
  CopyRates R{Bytes, 0, 0, 0};
  R.PackGBs = Rate([&] { launchCopyTiles(PackT, Pack.size(), SMs, nullptr); });
  R.UnpackGBs = Rate([&] { launchCopyTiles(UnpackT, Unpack.size(), SMs, nullptr); });
  R.MemcpyGBs = Rate([&] { cudaMemcpyAsync(Bucket, Src, Bytes, cudaMemcpyDeviceToDevice, nullptr); });
  cudaError_t Err = cudaDeviceSynchronize();
  cudaEventDestroy(A);
  cudaEventDestroy(B);
  cudaFree(PackT);
  cudaFree(UnpackT);
  cudaFree(Src);
  cudaFree(Bucket);
  if (Err != cudaSuccess)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "copy kernels failed: %s",
                                   cudaGetErrorString(Err));
  return R;
}

/// \p N static all_to_all_v on one rank, each its own group of a send and
/// a receive to self.
std::string selfAllToAllVProgram(unsigned N) {
  std::string Text = "program @self_a2av world(1) {\n  group @dp = world\n";
  std::string Uses;
  for (unsigned I = 0; I != N; ++I) {
    Text += formatv("  %h{0} = compute @c{0} : f32[256, 16]\n", I).str();
    Text += formatv("  %w{0} = all_to_all_v %h{0} in @dp splits [[256]] : f32[256, 16]\n", I).str();
    Uses += formatv("{0}%w{1}", I ? ", " : "", I).str();
  }
  return Text + "  compute @use(" + Uses + ")\n}\n";
}

/// The NCCL this process loaded, and the file it came from.
void printNccl() {
  int Version = 0;
  ncclGetVersion(&Version);
  Dl_info Info{};
  const char *From = dladdr(reinterpret_cast<void *>(&ncclGetVersion), &Info) && Info.dli_fname
                         ? Info.dli_fname
                         : "an unknown file";
  outs() << formatv("NCCL {0} from {1}\n", ncclVersionString(Version), From);
}

int fail(llvm::Error E) {
  llvm::errs() << "collc_gpu_bench: error: " << llvm::toString(std::move(E)) << '\n';
  return 1;
}

} // namespace

int main(int Argc, char **Argv) {
  unsigned Steps = 50;
  std::string Examples = COLLC_EXAMPLES_DIR;
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--steps") && I + 1 < Argc) {
      Steps = unsigned(std::max(1, atoi(Argv[++I])));
    } else if (!strcmp(Argv[I], "--examples") && I + 1 < Argc) {
      Examples = Argv[++I];
    } else if (!strcmp(Argv[I], "--timeout-ms") && I + 1 < Argc) {
      auto T = parseTimeoutMs(Argv[++I], "--timeout-ms");
      if (!T)
        return fail(T.takeError());
      Timeout = *T;
    } else if (!strcmp(Argv[I], "--version")) {
      printNccl();
      return 0;
    } else {
      llvm::errs() << "usage: collc_gpu_bench [--steps N] [--examples DIR] [--timeout-ms MS] "
                      "[--version]\n";
      return 2;
    }
  }
  if (auto T = timeoutFromEnvironment(); !T)
    return fail(T.takeError());
  std::string Why = gpu::whyNoGpu();
  if (!Why.empty()) {
    outs() << "collc_gpu_bench: skipped: " << Why << '\n';
    return 0;
  }
  cudaSetDevice(0);
  cudaDeviceProp Prop;
  cudaGetDeviceProperties(&Prop, 0);
  int Version = 0;
  ncclGetVersion(&Version);
  outs() << formatv("# GPU 0: {0}, {1} SMs; NCCL {2}; one rank (NCCL refuses two on one GPU)\n",
                    Prop.name, Prop.multiProcessorCount, ncclVersionString(Version));
  outs() << "# one rank: every NCCL collective takes NCCL's one-rank shortcut (a copy, a premul\n"
            "# kernel, or nothing), so those rows compare collc's eager issue path with a graph\n"
            "# launch, not NCCL's group launch; send/recv have no shortcut: the all_to_all_v row\n"
            "# (grouped send and receive to self) goes through ncclGroupEnd's launch\n";

  // Host time per step.
  auto Gpt2Text = llvm::MemoryBuffer::getFile(Examples + "/gpt2_ddp.coll");
  if (!Gpt2Text)
    return fail(llvm::createStringError(Gpt2Text.getError(), "cannot read gpt2_ddp.coll"));
  std::string Gpt2 = (*Gpt2Text)->getBuffer().str();
  size_t At = Gpt2.find("world(8)");
  if (At != std::string::npos)
    Gpt2.replace(At, 8, "world(1)");
  struct Case {
    const char *Name;
    std::string Text;
    const char *Pipeline;
  } Cases[] = {
      {"gpt2_ddp (DDP buckets)", Gpt2, ""},
      {"1000 x 4 KiB all_reduce", tinyAllReducesProgram(1000, 1), "verify,order,schedule,plan-memory"},
      {"64 x a2av send/recv self", selfAllToAllVProgram(64), ""},
  };
  outs() << formatv("\n{0,-26} {1,6} {2,6} {3,14} {4,14} {5,8} {6,14} {7,14}\n", "plan",
                    "nccl", "graphs", "eager_host_us", "graph_host_us", "ratio", "eager_step_us",
                    "graph_step_us");
  unsigned K = 0;
  for (const Case &C : Cases) {
    auto P = compileProgramText(C.Text, C.Pipeline);
    if (!P)
      return fail(P.takeError());
    auto T = timeSteps(*P, Steps, formatv("bench-{0}", K++).str().c_str());
    if (!T)
      return fail(T.takeError());
    outs() << formatv("{0,-26} {1,6} {2,6} {3,14:f1} {4,14:f1} {5,7:f1}x {6,14:f1} {7,14:f1}\n",
                      C.Name, T->NcclCalls, T->Graphs, T->EagerHostUs, T->GraphHostUs,
                      T->EagerHostUs / std::max(T->GraphHostUs, 1e-3), T->EagerStepUs,
                      T->GraphStepUs);
  }

  // Pack/unpack against cudaMemcpy.
  outs() << formatv("\n{0,12} {1,12} {2,12} {3,14} {4,10} {5,10}\n", "bytes", "pack_GB/s",
                    "unpack_GB/s", "memcpy_GB/s", "pack/cpy", "unpack/cpy");
  for (uint64_t Bytes : {uint64_t(1) << 20, uint64_t(16) << 20, uint64_t(64) << 20,
                         uint64_t(256) << 20}) {
    auto R = timeCopies(Bytes, Prop.multiProcessorCount);
    if (!R)
      return fail(R.takeError());
    outs() << formatv("{0,12} {1,12:f1} {2,12:f1} {3,14:f1} {4,9:f0}% {5,9:f0}%\n", R->Bytes,
                      R->PackGBs, R->UnpackGBs, R->MemcpyGBs, 100 * R->PackGBs / R->MemcpyGBs,
                      100 * R->UnpackGBs / R->MemcpyGBs);
  }
  outs() << "# bandwidth counts the bytes copied once (read + write of each byte), as "
            "cudaMemcpy's\n";
  return 0;
}
