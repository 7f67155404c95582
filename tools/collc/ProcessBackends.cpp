//===- tools/collc/ProcessBackends.cpp - Backends with one process per rank ===//

#include "tools/collc/ProcessBackends.h"

#include "tools/collc/bench/RawEngine.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::tool {

rt::ReductionOrder reductionOrderOf(StringRef Backend) {
  // Neither MPI, Gloo nor NCCL (rings, trees) promises an order, and narrow
  // floats may be accumulated in their own type: the bound of the loosest
  // case.
  rt::ReductionOrder Any;
  Any.RankOrdered = !isProcessBackend(Backend);
  Any.NarrowInF32 = Any.RankOrdered;
  return Any;
}

Expected<std::unique_ptr<RawEngine>> createRawEngine(StringRef Backend,
                                                     const rt::ProcessPlace &Place,
                                                     const rt::RendezvousAddress &Where,
                                                     std::chrono::milliseconds Timeout) {
  // The runtime's table says whether this build has the backend.
  if (Error E = rt::checkProcessBackendBuilt(Backend))
    return E;
#if COLLC_HAVE_MPI
  if (Backend == "mpi")
    return createRawMpiEngine(Place, Where, Timeout);
#endif
#if COLLC_HAVE_GLOO
  if (Backend == "gloo")
    return createRawGlooEngine(Place, Where, Timeout);
#endif
  return createStringError(inconvertibleErrorCode(),
                           formatv("collc bench --backend {0}: the bench compares the host "
                                   "backends (mpi, gloo) with their raw engines",
                                   Backend));
}

} // namespace collc::tool
