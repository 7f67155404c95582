//===- tools/collc/NcclRun.cpp - One rank of `collc run --backend nccl` ----===//

#include "tools/collc/NcclRun.h"

#include "runtime/process/CpuWorld.h"
#include "tools/collc/LocalRun.h"
#include "tools/collc/RankReport.h"
#include "tools/collc/ToolSupport.h"

#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/IdGather.h"
#include "runtime/nccl/NcclExecutor.h"
#include "runtime/nccl/StreamOrderCheck.h"
#include "runtime/verify/SyntheticData.h"

#include "llvm/Support/FormatVariadic.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <map>

using namespace llvm;

namespace collc::tool {

namespace {

using rt::nccl::checkCuda;

/// The device memory, streams and host data of one rank's run; freed at
/// the end whatever happened.
struct GpuRank {
  std::vector<void *> Device;
  cudaStream_t Model = nullptr;
  ~GpuRank() {
    for (void *P : Device)
      cudaFree(P);
    if (Model)
      cudaStreamDestroy(Model);
  }
};

/// What a compute copies to the device each step: its outputs' synthetic
/// contents, made once.
struct Upload {
  void *Dst;
  std::vector<char> Host;
};

class GpuRun {
public:
  GpuRun(const plan::Plan &P, const ProcessRunOptions &O, int Device)
      : P(P), O(O), Me(O.Place.Rank), Device(Device) {}

  /// Runs every step; fills Figures, or returns why it stopped.
  Error run(rt::WorldGather &World, RankFigures &Figures, raw_ostream &Err) {
    Expected<rt::nccl::Lowering> L = rt::nccl::lowerForRank(P, Me);
    if (!L)
      return L.takeError();
    std::string Prefix = O.Exec.CommPrefix;
    Expected<std::unique_ptr<rt::nccl::UniqueIdExchange>> Ids =
        rt::nccl::gatherUniqueIds(*L, Prefix, World);
    if (!Ids)
      return Ids.takeError();
    rt::nccl::NcclExecutorOptions NO;
    NO.Device = Device;
    NO.CommPrefix = Prefix;
    NO.Timeout = O.Exec.Timeout;
    NO.Ids = Ids->get();
    Expected<std::unique_ptr<rt::nccl::NcclExecutor>> Made =
        rt::nccl::NcclExecutor::create(P, Me, NO);
    if (!Made)
      return Made.takeError();
    rt::nccl::NcclExecutor &X = **Made;
    if (Error E = bindDeviceMemory(X))
      return E;
    std::vector<std::pair<cudaEvent_t, std::vector<Upload>>> Computes;
    if (Error E = prepareComputes(X, Computes))
      return E;
    if (Error E = X.capture())
      return E;
    Figures.BytesMoved = bytesMovedByRank(P, Me);
    for (unsigned S = 0; S != O.Steps; ++S) {
      for (auto &[Ready, Uploads] : Computes) {
        for (Upload &U : Uploads)
          if (Error E = checkCuda(cudaMemcpyAsync(U.Dst, U.Host.data(), U.Host.size(),
                                                  cudaMemcpyHostToDevice, Mem.Model),
                                  "cudaMemcpyAsync of a compute's synthetic output"))
            return E;
        if (Error E = checkCuda(cudaEventRecord(Ready, Mem.Model), "cudaEventRecord(ready)"))
          return E;
      }
      // The step's time is the replay's, not the copies'.
      if (Error E = checkCuda(cudaStreamSynchronize(Mem.Model), "cudaStreamSynchronize(model)"))
        return E;
      auto Start = std::chrono::steady_clock::now();
      if (Error E = X.replay())
        return E;
      if (Error E = X.synchronize())
        return E;
      Figures.StepUs.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - Start)
              .count());
    }
    for (const std::string &N : X.notes())
      if (Me == 0)
        Err << "collc run: note: " << N << '\n';
    return check(X, Figures, Err);
  }

private:
  Error bindDeviceMemory(rt::nccl::NcclExecutor &X) {
    StringMap<uint32_t> Index;
    for (size_t T = 0; T != P.Tensors.size(); ++T)
      Index[P.Tensors[T].Name] = uint32_t(T);
    for (const std::string &Name : X.unboundTensors()) {
      uint64_t Bytes = P.Tensors[Index.lookup(Name)].Type.bytes();
      void *Ptr = nullptr;
      if (Error E = checkCuda(cudaMalloc(&Ptr, std::max<uint64_t>(Bytes, 1)),
                              formatv("cudaMalloc of %{0} ({1} bytes)", Name, Bytes)))
        return E;
      Mem.Device.push_back(Ptr);
      // Zero: the reference expects the unused capacity of an all_to_all_v
      // to stay so.
      if (Error E = checkCuda(cudaMemset(Ptr, 0, Bytes), formatv("cudaMemset of %{0}", Name)))
        return E;
      if (Error E = X.bind(Name, Ptr, Bytes))
        return E;
    }
    return checkCuda(cudaStreamCreateWithFlags(&Mem.Model, cudaStreamNonBlocking),
                     "cudaStreamCreateWithFlags(model)");
  }

  /// This rank's computes in plan order, each with its ready event and the
  /// outputs it writes that a comm touches.
  Error prepareComputes(rt::nccl::NcclExecutor &X,
                        std::vector<std::pair<cudaEvent_t, std::vector<Upload>>> &Out) {
    for (const plan::Compute &C : P.Computes) {
      if (!C.Ranks.contains(Me))
        continue;
      Expected<cudaEvent_t> Ready = X.readyEvent(C.Name);
      if (!Ready)
        return Ready.takeError();
      std::vector<Upload> Uploads;
      for (uint32_t T : C.Outputs) {
        Expected<void *> Dst = X.tensor(P.Tensors[T].Name);
        if (!Dst) { // no comm touches it: the model's alone
          consumeError(Dst.takeError());
          continue;
        }
        Upload U{*Dst, std::vector<char>(P.Tensors[T].Type.bytes())};
        rt::fillSynthetic(P, T, Me, U.Host);
        Uploads.push_back(std::move(U));
      }
      Out.push_back({*Ready, std::move(Uploads)});
    }
    return Error::success();
  }

  /// This rank's comm outputs, copied back and checked.
  Error check(rt::nccl::NcclExecutor &X, RankFigures &Figures, raw_ostream &Err) {
    std::map<uint32_t, std::vector<char>> Got;
    for (const plan::Comm &C : P.Comms) {
      if (!C.Ranks.contains(Me))
        continue;
      for (uint32_t T : C.Outputs) {
        if (Got.count(T))
          continue;
        Expected<void *> Dev = X.tensor(P.Tensors[T].Name);
        if (!Dev)
          return Dev.takeError();
        std::vector<char> Host(P.Tensors[T].Type.bytes());
        if (Error E = checkCuda(cudaMemcpy(Host.data(), *Dev, Host.size(), cudaMemcpyDeviceToHost),
                                formatv("cudaMemcpy of %{0} to the host", P.Tensors[T].Name)))
          return E;
        Got[T] = std::move(Host);
      }
    }
    Expected<rt::CheckSummary> Check =
        checkThisRank(P, O.Backend, Me, [&](int64_t, uint32_t T) -> ArrayRef<char> {
          auto It = Got.find(T);
          return It == Got.end() ? ArrayRef<char>() : ArrayRef<char>(It->second);
        });
    Figures.Verified = bool(Check);
    if (Check) {
      Figures.Checked = *Check;
    } else {
      Err << formatv("collc run: rank {0}: ", Me) << toString(Check.takeError()) << '\n';
      Err.flush();
    }
    return Error::success();
  }

  const plan::Plan &P;
  const ProcessRunOptions &O;
  int64_t Me;
  int Device;
  GpuRank Mem;
};

} // namespace

int runThisProcessOnGpu(const plan::Plan &P, const ProcessRunOptions &O, raw_ostream &Out,
                        raw_ostream &Err) {
  int64_t Me = O.Place.Rank;
  auto Fail = [&](const Twine &Why) { return rankFailed(O, Why, Err); };
  // Before meeting anyone: a plan the comm streams' order cannot run
  // (every rank finds the same), and without a GPU, every rank stops here
  // at once.
  if (Error E = rt::nccl::checkStreamOrder(P))
    return Fail(toString(std::move(E)));
  Expected<int> Devices = rt::nccl::countCudaDevices();
  if (!Devices)
    return Fail(toString(Devices.takeError()));
  int Device = int(O.Place.LocalRank % *Devices);
  if (Me == 0) {
    Out << formatv("running @{0} on {1} nccl processes for {2} steps (plan {3}, rendezvous {4}); "
                   "rank 0 on device {5} of {6} (local rank {7} % {6})\n",
                   P.Program, O.Place.World, O.Steps, P.Digest, O.Where.text(), Device, *Devices,
                   O.Place.LocalRank);
    Out.flush();
  }
  Expected<std::unique_ptr<rt::WorldGather>> World =
      rt::joinCpuWorld(O.Place, O.Where, O.Exec.CommPrefix + "/#cpu-world", O.Exec.Timeout);
  if (!World)
    return Fail("joining the CPU world: " + toString(World.takeError()));
  RankFigures Mine;
  Mine.Rank = Me;
  Mine.World = O.Place.World;
  Mine.Steps = O.Steps;
  {
    GpuRun Run(P, O, Device);
    if (Error E = Run.run(**World, Mine, Err))
      return Fail(toString(std::move(E)));
  }
  return reportAcrossRanks(
      Mine, O.Backend, [&](ArrayRef<uint32_t> W) { return (*World)->allGatherWords(W); }, Out, Err);
}

} // namespace collc::tool
