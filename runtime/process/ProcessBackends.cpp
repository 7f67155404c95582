//===- runtime/process/ProcessBackends.cpp - Backends with one process per rank ===//

#include "runtime/process/ProcessBackends.h"

#include "runtime/process/CpuWorld.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#if COLLC_HAVE_MPI
#include "runtime/mpi/MpiExecutor.h"
#include "runtime/mpi/MpiSession.h"
#endif
#if COLLC_HAVE_GLOO
#include "runtime/gloo/GlooDriver.h"
#include "runtime/gloo/GlooExecutor.h"
#endif
#if COLLC_PROCESS_HAS_NCCL
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclRankExecutor.h"
#endif
// CUDA-free: judged in every build.
#include "runtime/nccl/StreamOrderCheck.h"

using namespace llvm;

namespace collc::rt {

namespace {

using Factory = Expected<std::unique_ptr<Executor>> (*)(const plan::Plan &, const ProcessPlace &,
                                                        const RendezvousAddress &,
                                                        ExecutorOptions);

/// What a backend needs alive in the process while its executors live
/// (MPI: initialized, then finalized after them).
using Starter = Expected<std::shared_ptr<void>> (*)();

/// What a process of the backend needs on this host.
using HostCheck = Error (*)();

/// What the backend cannot run, judged from the plan alone.
using PlanCheck = Error (*)(const plan::Plan &);

struct ProcessBackend {
  const char *Name;
  Factory Create;       ///< null: not in this build
  const char *Packages; ///< what brings it
  Starter Start = nullptr;
  HostCheck CheckHost = nullptr;
  /// The most processes a run of it takes (a program's world at most).
  int64_t MaxProcesses = MaxWorldSize;
  /// Why this build lacks it, where the build said more than "not found".
  const char *NotBuiltWhy = nullptr;
  /// Where its executors' memory is.
  MemoryKind Memory = MemoryKind::Host;
  PlanCheck CheckPlan = nullptr;
};

#if COLLC_HAVE_MPI
Expected<std::shared_ptr<void>> startMpi() {
  Expected<std::unique_ptr<mpi::MpiSession>> S = mpi::MpiSession::start();
  if (!S)
    return S.takeError();
  return std::shared_ptr<void>(std::move(*S));
}
#endif

#if COLLC_PROCESS_HAS_NCCL
/// The ranks meet in their CPU world (MPI's or Gloo's, as \p Where says)
/// to share the communicators' unique ids; the executor keeps it.
Expected<std::unique_ptr<Executor>> createNcclExecutor(const plan::Plan &P,
                                                       const ProcessPlace &Place,
                                                       const RendezvousAddress &Where,
                                                       ExecutorOptions Opts) {
  auto Join = [&]() -> Expected<std::unique_ptr<WorldGather>> {
    Expected<std::unique_ptr<WorldGather>> World =
        joinCpuWorld(Place, Where, Opts.CommPrefix + "/#cpu-world", Opts.Timeout);
    if (!World)
      return createStringError(inconvertibleErrorCode(),
                               "joining the CPU world: " + toString(World.takeError()));
    return World;
  };
  return nccl::createNcclRankExecutor(P, Place, Join, Opts);
}

Error checkGpu() {
  Expected<int> Devices = nccl::countCudaDevices();
  return Devices ? Error::success() : Devices.takeError();
}
#endif

const ProcessBackend Backends[] = {
#if COLLC_HAVE_MPI
    {"mpi", createMpiExecutor, "libopenmpi-dev openmpi-bin", startMpi},
#else
    {"mpi", nullptr, "libopenmpi-dev openmpi-bin"},
#endif
#if COLLC_HAVE_GLOO
    {"gloo", createGlooExecutor, "libgloo-dev", nullptr, nullptr,
     int64_t(gloo::GlooDriver::MaxRanks)},
#else
    {"gloo", nullptr, "libgloo-dev"},
#endif
#if COLLC_PROCESS_HAS_NCCL
    {"nccl", createNcclExecutor, "the CUDA toolkit and NCCL (libnccl-dev)", nullptr, checkGpu,
     MaxWorldSize, nullptr, MemoryKind::Device, nccl::checkStreamOrder},
#else
    {"nccl", nullptr, "the CUDA toolkit and NCCL (libnccl-dev)", nullptr, nullptr, MaxWorldSize,
     COLLC_PROCESS_NCCL_REASON, MemoryKind::Device, nccl::checkStreamOrder},
#endif
};

/// The entry named \p Backend that this build has, or why not.
Expected<const ProcessBackend *> builtBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends) {
    if (Backend != B.Name)
      continue;
    if (!B.Create)
      return makeError(ErrorKind::Unsupported,
                       formatv("collc was built without the {0} backend ({1}install {2}, then "
                               "rebuild)",
                               B.Name, B.NotBuiltWhy ? std::string(B.NotBuiltWhy) + ": " : "",
                               B.Packages));
    return &B;
  }
  return makeError(ErrorKind::InvalidArgument,
                   formatv("--backend {0}: expected local, {1}", Backend, processBackendNames()));
}

} // namespace

std::string processBackendNames() {
  std::string Names;
  for (const ProcessBackend &B : Backends)
    Names += (Names.empty() ? "" : ", ") + std::string(B.Name);
  return Names;
}

bool isProcessBackend(StringRef Backend) {
  return any_of(Backends, [&](const ProcessBackend &B) { return Backend == B.Name; });
}

Error checkProcessBackendBuilt(StringRef Backend) {
  Expected<const ProcessBackend *> B = builtBackend(Backend);
  return B ? Error::success() : B.takeError();
}

Error checkProcessWorld(StringRef Backend, const ProcessPlace &Place) {
  for (const ProcessBackend &B : Backends)
    if (Backend == B.Name && Place.World > B.MaxProcesses)
      return makeError(ErrorKind::InvalidArgument,
                       formatv("world {0} (from {1}): the {2} backend takes at most {3} processes",
                               Place.World, Place.Source, B.Name, B.MaxProcesses));
  return Error::success();
}

ReductionOrder reductionOrderOf(StringRef Backend) {
  // Neither MPI, Gloo nor NCCL (rings, trees) promises an order: the bound
  // of the loosest case.
  ReductionOrder Order;
  Order.RankOrdered = Order.NarrowInF32 = !isProcessBackend(Backend);
  return Order;
}

MemoryKind backendMemory(StringRef Backend) {
  for (const ProcessBackend &B : Backends)
    if (Backend == B.Name)
      return B.Memory;
  return MemoryKind::Host;
}

Error checkProcessHost(StringRef Backend) {
  Expected<const ProcessBackend *> B = builtBackend(Backend);
  if (!B)
    return B.takeError();
  return (*B)->CheckHost ? (*B)->CheckHost() : Error::success();
}

Error checkProcessPlan(StringRef Backend, const plan::Plan &P) {
  Expected<const ProcessBackend *> B = builtBackend(Backend);
  if (!B)
    return B.takeError();
  return (*B)->CheckPlan ? (*B)->CheckPlan(P) : Error::success();
}

Error checkPlanForBackend(StringRef Backend, const plan::Plan &P) {
  if (Backend == "local")
    return Error::success();
  for (const ProcessBackend &B : Backends)
    if (Backend == B.Name)
      return B.CheckPlan ? B.CheckPlan(P) : Error::success();
  return makeError(ErrorKind::InvalidArgument,
                   formatv("--backend {0}: expected local, {1}", Backend, processBackendNames()));
}

Expected<std::shared_ptr<void>> startProcessBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends)
    if (Backend == B.Name && B.Create && B.Start)
      return B.Start();
  return std::shared_ptr<void>();
}

StringRef sessionBackendFor(StringRef Backend, const RendezvousAddress &Where) {
  return Backend == "mpi" || Where.How == RendezvousAddress::Kind::Mpi ? "mpi" : "";
}

Expected<std::shared_ptr<void>> startSessionFor(StringRef Backend,
                                                const RendezvousAddress &Where) {
  StringRef Session = sessionBackendFor(Backend, Where);
  if (Session.empty())
    return nullptr;
  if (Error E = checkProcessBackendBuilt(Session))
    return createStringError(inconvertibleErrorCode(),
                             formatv("{0} needs the mpi backend: {1}",
                                     Backend == "mpi" ? "--backend mpi" : "--rendezvous mpi",
                                     toString(std::move(E))));
  return startProcessBackend(Session);
}

Expected<std::unique_ptr<Executor>> createProcessExecutor(StringRef Backend, const plan::Plan &P,
                                                          const ProcessPlace &Place,
                                                          const RendezvousAddress &Where,
                                                          ExecutorOptions Opts) {
  Expected<const ProcessBackend *> B = builtBackend(Backend);
  if (!B)
    return B.takeError();
  return (*B)->Create(P, Place, Where, std::move(Opts));
}

} // namespace collc::rt
