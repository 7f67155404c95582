//===- runtime/process/ProcessBackends.cpp - Backends with one process per rank ===//

#include "runtime/process/ProcessBackends.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#if COLLC_HAVE_MPI
#include "runtime/mpi/MpiExecutor.h"
#include "runtime/mpi/MpiSession.h"
#endif
#if COLLC_HAVE_GLOO
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
  Factory Create;       ///< null: not in this build
  const char *Packages; ///< what brings it
  Starter Start = nullptr;
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
    {"mpi", nullptr, "libopenmpi-dev openmpi-bin"},
#endif
#if COLLC_HAVE_GLOO
    {"gloo", createGlooExecutor, "libgloo-dev"},
#else
    {"gloo", nullptr, "libgloo-dev"},
#endif
};

/// The entry named \p Backend that this build has, or why not.
Expected<const ProcessBackend *> builtBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends) {
    if (Backend != B.Name)
      continue;
    if (!B.Create)
      return makeError(ErrorKind::Unsupported,
                       formatv("collc was built without the {0} backend (apt-get install "
                               "{1}, then rebuild)",
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

Error checkProcessBackendBuilt(StringRef Backend) {
  Expected<const ProcessBackend *> B = builtBackend(Backend);
  return B ? Error::success() : B.takeError();
}

Expected<std::shared_ptr<void>> startProcessBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends)
    if (Backend == B.Name && B.Create && B.Start)
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
  return (*B)->Create(P, Place, Where, std::move(Opts));
}

} // namespace collc::rt
