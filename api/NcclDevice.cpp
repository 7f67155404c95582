//===- api/NcclDevice.cpp - collc.h's nccl executors ----------------------===//
//
// One rank on one GPU, as `collc run --backend nccl` runs it
// (tools/collc/NcclRun.cpp): a plan NCCL's stream order cannot run
// (runtime/nccl/StreamOrderCheck.h) and no GPU refuse at once, before
// meeting any peer; the ranks meet in their CPU world (runtime/process/CpuWorld.h),
// exchange the NCCL unique ids in one all-gather (runtime/nccl/IdGather.h),
// and the NcclExecutor creates its communicators from them. A step is the
// executor's CUDA graphs, replayed on its comm stream between event fences
// to and from the caller's stream (NcclExecutor::replayOn).
//
//===----------------------------------------------------------------------===//

#include "api/DeviceExecutor.h"

#include "api/ApiError.h"
#include "api/BackendSessions.h"

#include "llvm/Support/FormatVariadic.h"

#if COLLC_API_HAS_NCCL
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/IdGather.h"
#include "runtime/nccl/NcclExecutor.h"
#include "runtime/nccl/StreamOrderCheck.h"
#include "runtime/process/CpuWorld.h"
#endif

using namespace llvm;

namespace collc::api {

DeviceExecutor::~DeviceExecutor() = default;

#if COLLC_API_HAS_NCCL

namespace {

class NcclDevice final : public DeviceExecutor {
public:
  NcclDevice(const plan::Plan &P) : P(P) {}

  Error create(const DevicePlace &Place, const rt::ExecutorOptions &Opts,
               std::shared_ptr<void> &Session) {
    // A plan the ranks' comm streams cannot run in NCCL's order is refused
    // first, on any machine (lowerForRank checks again).
    if (Error E = rt::nccl::checkStreamOrder(P))
      return makeApiError(collcUnsupported,
                          "options->backend is \"nccl\": " + toString(std::move(E)));
    Expected<int> Devices = rt::nccl::countCudaDevices();
    if (!Devices)
      return makeApiError(collcUnsupported,
                          "options->backend is \"nccl\": " + toString(Devices.takeError()));
    Expected<rt::RendezvousAddress> Where = rt::parseRendezvous(
        Place.Rendezvous.empty() ? rt::defaultRendezvous("nccl") : StringRef(Place.Rendezvous),
        "options->rendezvous");
    if (!Where)
      return makeApiError(collcInvalidArgument, toString(Where.takeError()));
    rt::PlaceFlags Flags;
    Flags.Rank = Place.Rank;
    Flags.World = P.World;
    Expected<rt::ProcessPlace> Me = rt::placeFromLauncher(Flags);
    if (!Me)
      return Me.takeError();
    int64_t Device = Place.Device >= 0 ? Place.Device : Me->LocalRank % *Devices;
    if (Device >= *Devices)
      return makeApiError(collcInvalidArgument,
                          formatv("options->device is {0}: expected 0..{1} (the CUDA devices "
                                  "this process sees) or -1",
                                  Device, *Devices - 1));
    if (Where->How == rt::RendezvousAddress::Kind::Mpi) {
      Expected<std::shared_ptr<void>> S = holdBackendSession("mpi");
      if (!S)
        return S.takeError();
      Session = std::move(*S);
    }
    Expected<rt::nccl::Lowering> L = rt::nccl::lowerForRank(P, Place.Rank);
    if (!L)
      return L.takeError();
    const std::string Prefix = "collc";
    Expected<std::unique_ptr<rt::WorldGather>> W =
        rt::joinCpuWorld(*Me, *Where, Prefix + "/#cpu-world", Opts.Timeout);
    if (!W)
      return W.takeError();
    World = std::move(*W);
    Expected<std::unique_ptr<rt::nccl::UniqueIdExchange>> I =
        rt::nccl::gatherUniqueIds(*L, Prefix, *World);
    if (!I)
      return I.takeError();
    Ids = std::move(*I);
    rt::nccl::NcclExecutorOptions NO;
    NO.Device = int(Device);
    NO.CommPrefix = Prefix;
    NO.Timeout = Opts.Timeout;
    NO.DigestHandshake = Opts.DigestHandshake;
    NO.Ids = Ids.get();
    Expected<std::unique_ptr<rt::nccl::NcclExecutor>> X =
        rt::nccl::NcclExecutor::create(P, Place.Rank, NO);
    if (!X)
      return X.takeError();
    Exec = std::move(*X);
    return Error::success();
  }

  Error bind(StringRef Name, void *Device, uint64_t Bytes) override {
    return Exec->bind(Name, Device, Bytes);
  }

  void setStream(void *CudaStream) override { Stream = static_cast<cudaStream_t>(CudaStream); }

  Expected<std::pair<void *, uint64_t>> tensor(StringRef Name) const override {
    Expected<void *> Where = Exec->tensor(Name);
    if (!Where)
      return Where.takeError();
    for (const plan::Tensor &T : P.Tensors)
      if (T.Name == plan::tensorName(Name))
        return std::make_pair(*Where, uint64_t(T.Type.bytes()));
    return makeApiError(collcInternalError, "a tensor the executor has is not in its plan");
  }

  std::vector<std::string> unboundTensors() const override { return Exec->unboundTensors(); }

  Error capture() override { return Exec->capture(); }

  Error replay() override { return Exec->replayOn(Stream); }

  Error synchronize(std::chrono::milliseconds Limit) override {
    return Exec->synchronizeWithin(Limit);
  }

private:
  const plan::Plan &P;
  // Destroyed bottom to top: the executor before the ids and the world.
  std::unique_ptr<rt::WorldGather> World;
  std::unique_ptr<rt::nccl::UniqueIdExchange> Ids;
  std::unique_ptr<rt::nccl::NcclExecutor> Exec;
  cudaStream_t Stream = nullptr;
};

} // namespace

Expected<std::unique_ptr<DeviceExecutor>> createNcclExecutor(const plan::Plan &P,
                                                             const DevicePlace &Place,
                                                             const rt::ExecutorOptions &Opts,
                                                             std::shared_ptr<void> &Session) {
  auto D = std::make_unique<NcclDevice>(P);
  if (Error E = D->create(Place, Opts, Session))
    return E;
  return std::unique_ptr<DeviceExecutor>(std::move(D));
}

#else

Expected<std::unique_ptr<DeviceExecutor>> createNcclExecutor(const plan::Plan &,
                                                             const DevicePlace &,
                                                             const rt::ExecutorOptions &,
                                                             std::shared_ptr<void> &) {
  return makeApiError(collcUnsupported,
                      "options->backend is \"nccl\": this libcollc was built without the nccl "
                      "backend (" COLLC_API_NCCL_REASON ")");
}

#endif

} // namespace collc::api
