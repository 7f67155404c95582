//===- runtime/process/ProcessBackends.cpp - Backends with one process per rank ===//

#include "runtime/process/ProcessBackends.h"

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

using namespace llvm;

namespace collc::rt {

namespace {

using Factory = Expected<std::unique_ptr<Executor>> (*)(const plan::Plan &, const ProcessPlace &,
                                                        const RendezvousAddress &,
                                                        ExecutorOptions);

/// What a backend needs alive in the process while its executors live
/// (MPI: initialized, then finalized after them).
using Starter = Expected<std::shared_ptr<void>> (*)();

struct ProcessBackend {
  const char *Name;
  Factory Create;       ///< null: not in this build, or a device backend
  const char *Packages; ///< what brings it
  Starter Start = nullptr;
  /// Runs on a GPU with an executor of its own, not an rt::Executor.
  bool OnDevice = false;
  bool Built = true;
  /// The most processes a run of it takes (a program's world at most).
  int64_t MaxProcesses = MaxWorldSize;
};

#if COLLC_HAVE_MPI
Expected<std::shared_ptr<void>> startMpi() {
  Expected<std::unique_ptr<mpi::MpiSession>> S = mpi::MpiSession::start();
  if (!S)
    return S.takeError();
  return std::shared_ptr<void>(std::move(*S));
}
#endif

const ProcessBackend Backends[] = {
#if COLLC_HAVE_MPI
    {"mpi", createMpiExecutor, "libopenmpi-dev openmpi-bin", startMpi},
#else
    {"mpi", nullptr, "libopenmpi-dev openmpi-bin", nullptr, false, false},
#endif
#if COLLC_HAVE_GLOO
    {"gloo", createGlooExecutor, "libgloo-dev", nullptr, false, true,
     int64_t(gloo::GlooDriver::MaxRanks)},
#else
    {"gloo", nullptr, "libgloo-dev", nullptr, false, false},
#endif
#if COLLC_PROCESS_HAS_NCCL
    {"nccl", nullptr, "the CUDA toolkit and NCCL (libnccl-dev)", nullptr, true, true},
#else
    {"nccl", nullptr, "the CUDA toolkit and NCCL (libnccl-dev)", nullptr, true, false},
#endif
};

/// The entry named \p Backend that this build has, or why not.
Expected<const ProcessBackend *> builtBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends) {
    if (Backend != B.Name)
      continue;
    if (!B.Built)
      return makeError(ErrorKind::Unsupported,
                       formatv("collc was built without the {0} backend (install {1}, then "
                               "rebuild)",
                               B.Name, B.Packages));
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

bool backendRunsOnDevice(StringRef Backend) {
  return any_of(Backends,
                [&](const ProcessBackend &B) { return Backend == B.Name && B.OnDevice; });
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

Expected<std::shared_ptr<void>> startProcessBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends)
    if (Backend == B.Name && B.Built && B.Start)
      return B.Start();
  return std::shared_ptr<void>();
}

Expected<std::unique_ptr<Executor>> createProcessExecutor(StringRef Backend, const plan::Plan &P,
                                                          const ProcessPlace &Place,
                                                          const RendezvousAddress &Where,
                                                          ExecutorOptions Opts) {
  Expected<const ProcessBackend *> B = builtBackend(Backend);
  if (!B)
    return B.takeError();
  if ((*B)->OnDevice)
    return makeError(ErrorKind::Unsupported,
                     formatv("the {0} backend runs on a GPU with an executor of its own, not a "
                             "host executor",
                             Backend));
  return (*B)->Create(P, Place, Where, std::move(Opts));
}

} // namespace collc::rt
