//===- tools/collc/ProcessBackends.cpp - Backends with one process per rank ===//

#include "tools/collc/ProcessBackends.h"

#include "tools/collc/bench/RawEngine.h"

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

namespace collc::tool {

namespace {

using Factory = Expected<std::unique_ptr<rt::Executor>> (*)(const plan::Plan &,
                                                            const rt::ProcessPlace &,
                                                            const rt::RendezvousAddress &,
                                                            rt::ExecutorOptions);

/// What a backend needs alive in the process while its executors live
/// (MPI: initialized, then finalized after them).
using Starter = Expected<std::shared_ptr<void>> (*)();

struct ProcessBackend {
  const char *Name;
  Factory Create;         ///< null: not in this build
  RawEngineFactory Raw;   ///< the engine `collc bench` compares with
  const char *Packages;   ///< what brings it
  Starter Start = nullptr;
};

#if COLLC_HAVE_MPI
Expected<std::shared_ptr<void>> startMpi() {
  Expected<std::unique_ptr<rt::mpi::MpiSession>> S = rt::mpi::MpiSession::start();
  if (!S)
    return S.takeError();
  return std::shared_ptr<void>(std::move(*S));
}
#endif

const ProcessBackend Backends[] = {
#if COLLC_HAVE_MPI
    {"mpi", rt::createMpiExecutor, createRawMpiEngine, "libopenmpi-dev openmpi-bin", startMpi},
#else
    {"mpi", nullptr, nullptr, "libopenmpi-dev openmpi-bin"},
#endif
#if COLLC_HAVE_GLOO
    {"gloo", rt::createGlooExecutor, createRawGlooEngine, "libgloo-dev"},
#else
    {"gloo", nullptr, nullptr, "libgloo-dev"},
#endif
};

/// The entry named \p Backend that this build has, or why not.
Expected<const ProcessBackend *> builtBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends) {
    if (Backend != B.Name)
      continue;
    if (!B.Create)
      return createStringError(inconvertibleErrorCode(),
                               formatv("collc was built without the {0} backend (apt-get install "
                                       "{1}, then rebuild)",
                                       B.Name, B.Packages));
    return &B;
  }
  return createStringError(inconvertibleErrorCode(),
                           formatv("--backend {0}: expected local, {1}", Backend,
                                   processBackendNames()));
}

} // namespace

std::string processBackendNames() {
  std::string Names;
  for (const ProcessBackend &B : Backends)
    Names += (Names.empty() ? "" : ", ") + std::string(B.Name);
  return Names;
}

rt::ReductionOrder reductionOrderOf(StringRef Backend) {
  // Neither MPI nor Gloo promises an order, and narrow floats may be
  // accumulated in their own type: the bound of the loosest case.
  rt::ReductionOrder Any;
  Any.RankOrdered = !isProcessBackend(Backend);
  Any.NarrowInF32 = Any.RankOrdered;
  return Any;
}

bool isProcessBackend(StringRef Backend) {
  return any_of(Backends, [&](const ProcessBackend &B) { return Backend == B.Name; });
}

Expected<std::shared_ptr<void>> startProcessBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends)
    if (Backend == B.Name && B.Create && B.Start)
      return B.Start();
  return std::shared_ptr<void>();
}

Expected<std::unique_ptr<rt::Executor>>
createProcessExecutor(StringRef Backend, const plan::Plan &P, const rt::ProcessPlace &Place,
                      const rt::RendezvousAddress &Where, rt::ExecutorOptions Opts) {
  Expected<const ProcessBackend *> B = builtBackend(Backend);
  if (!B)
    return B.takeError();
  return (*B)->Create(P, Place, Where, std::move(Opts));
}

Expected<std::unique_ptr<RawEngine>> createRawEngine(StringRef Backend,
                                                     const rt::ProcessPlace &Place,
                                                     const rt::RendezvousAddress &Where,
                                                     std::chrono::milliseconds Timeout) {
  Expected<const ProcessBackend *> B = builtBackend(Backend);
  if (!B)
    return B.takeError();
  return (*B)->Raw(Place, Where, Timeout);
}

} // namespace collc::tool
