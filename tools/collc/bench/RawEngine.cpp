//===- tools/collc/bench/RawEngine.cpp - The engine under a process backend ---===//

#include "tools/collc/bench/RawEngine.h"

#include "runtime/process/ProcessBackends.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::tool {

Expected<std::unique_ptr<RawEngine>> createRawEngine(StringRef Backend,
                                                     const rt::ProcessPlace &Place,
                                                     const rt::RendezvousAddress &Where,
                                                     std::chrono::milliseconds Timeout) {
  // The runtime's table says whether this build has the backend.
  if (Error E = rt::checkProcessBackendBuilt(Backend))
    return E;
  struct Engine {
    const char *Backend;
    RawEngineFactory Create;
  };
  static const Engine Engines[] = {
#if COLLC_HAVE_MPI
      {"mpi", createRawMpiEngine},
#endif
#if COLLC_HAVE_GLOO
      {"gloo", createRawGlooEngine},
#endif
  };
  for (const Engine &E : Engines)
    if (Backend == E.Backend)
      return E.Create(Place, Where, Timeout);
  return createStringError(inconvertibleErrorCode(),
                           formatv("collc bench --backend {0}: the bench compares the host "
                                   "backends (mpi, gloo) with their raw engines",
                                   Backend));
}

} // namespace collc::tool
