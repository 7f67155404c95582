//===- tools/collc/ProcessBackends.cpp - Backends with one process per rank ===//

#include "tools/collc/ProcessBackends.h"

#include "tools/collc/bench/RawEngine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#if COLLC_HAVE_MPI
#include "runtime/mpi/MpiExecutor.h"
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

struct ProcessBackend {
  const char *Name;
  Factory Create;        ///< null: not in this build, or a device backend
  RawEngineFactory Raw;  ///< the engine `collc bench` compares with (null: none)
  const char *Packages;  ///< what brings it
  /// Runs on a GPU with an executor of its own (NcclRun.h), not an
  /// rt::Executor; Built says whether this build has it.
  bool OnDevice = false;
  bool Built = true;
};

const ProcessBackend Backends[] = {
#if COLLC_HAVE_MPI
    {"mpi", rt::createMpiExecutor, createRawMpiEngine, "libopenmpi-dev openmpi-bin"},
#else
    {"mpi", nullptr, nullptr, "libopenmpi-dev openmpi-bin", false, false},
#endif
#if COLLC_HAVE_GLOO
    {"gloo", rt::createGlooExecutor, createRawGlooEngine, "libgloo-dev"},
#else
    {"gloo", nullptr, nullptr, "libgloo-dev", false, false},
#endif
#if COLLC_HAVE_NCCL
    {"nccl", nullptr, nullptr, "the CUDA toolkit and NCCL (libnccl-dev)", true, true},
#else
    {"nccl", nullptr, nullptr, "the CUDA toolkit and NCCL (libnccl-dev)", true, false},
#endif
};

/// The entry named \p Backend, if this build has it as a host backend.
Expected<const ProcessBackend *> hostBackend(StringRef Backend) {
  for (const ProcessBackend &B : Backends) {
    if (Backend != B.Name)
      continue;
    if (!B.Built)
      return createStringError(inconvertibleErrorCode(),
                               formatv("collc was built without the {0} backend (install {1}, "
                                       "then rebuild)",
                                       B.Name, B.Packages));
    if (B.OnDevice)
      return createStringError(inconvertibleErrorCode(),
                               formatv("the {0} backend runs on a GPU with an executor of its "
                                       "own, not a host executor",
                                       B.Name));
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
  // Neither MPI, Gloo nor NCCL (rings, trees) promises an order, and narrow
  // floats may be accumulated in their own type: the bound of the loosest
  // case.
  rt::ReductionOrder Any;
  Any.RankOrdered = !isProcessBackend(Backend);
  Any.NarrowInF32 = Any.RankOrdered;
  return Any;
}

bool isProcessBackend(StringRef Backend) {
  return any_of(Backends, [&](const ProcessBackend &B) { return Backend == B.Name; });
}

bool backendRunsOnDevice(StringRef Backend) {
  return any_of(Backends,
                [&](const ProcessBackend &B) { return Backend == B.Name && B.OnDevice; });
}

Expected<std::unique_ptr<rt::Executor>>
createProcessExecutor(StringRef Backend, const plan::Plan &P, const rt::ProcessPlace &Place,
                      const rt::RendezvousAddress &Where, rt::ExecutorOptions Opts) {
  Expected<const ProcessBackend *> B = hostBackend(Backend);
  if (!B)
    return B.takeError();
  return (*B)->Create(P, Place, Where, std::move(Opts));
}

Expected<std::unique_ptr<RawEngine>> createRawEngine(StringRef Backend,
                                                     const rt::ProcessPlace &Place,
                                                     const rt::RendezvousAddress &Where,
                                                     std::chrono::milliseconds Timeout) {
  Expected<const ProcessBackend *> B = hostBackend(Backend);
  if (!B)
    return B.takeError();
  return (*B)->Raw(Place, Where, Timeout);
}

} // namespace collc::tool
