//===- tools/collc/ProcessBackends.cpp - Backends with one process per rank ===//

#include "tools/collc/ProcessBackends.h"

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
  const char *Packages;  ///< what brings it
  /// Runs on a GPU with an executor of its own (NcclRun.h), not an
  /// rt::Executor; Built says whether this build has it.
  bool OnDevice = false;
  bool Built = true;
};

const ProcessBackend Backends[] = {
#if COLLC_HAVE_MPI
    {"mpi", rt::createMpiExecutor, "libopenmpi-dev openmpi-bin"},
#else
    {"mpi", nullptr, "libopenmpi-dev openmpi-bin"},
#endif
#if COLLC_HAVE_GLOO
    {"gloo", rt::createGlooExecutor, "libgloo-dev"},
#else
    {"gloo", nullptr, "libgloo-dev"},
#endif
#if COLLC_HAVE_NCCL
    {"nccl", nullptr, "the CUDA toolkit and NCCL (libnccl-dev)", true, true},
#else
    {"nccl", nullptr, "the CUDA toolkit and NCCL (libnccl-dev)", true, false},
#endif
};

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
  for (const ProcessBackend &B : Backends) {
    if (Backend != B.Name)
      continue;
    if (B.OnDevice && B.Built)
      return createStringError(inconvertibleErrorCode(),
                               formatv("the {0} backend runs on a GPU with an executor of its "
                                       "own, not a host executor",
                                       B.Name));
    if (!B.Create)
      return createStringError(inconvertibleErrorCode(),
                               formatv("collc was built without the {0} backend (install {1}, "
                                       "then rebuild)",
                                       B.Name, B.Packages));
    return B.Create(P, Place, Where, std::move(Opts));
  }
  return createStringError(inconvertibleErrorCode(),
                           formatv("--backend {0}: expected local, {1}", Backend,
                                   processBackendNames()));
}

} // namespace collc::tool
