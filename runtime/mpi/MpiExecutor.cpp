//===- runtime/mpi/MpiExecutor.cpp - The executor on the mpi backend -------===//

#include "runtime/mpi/MpiExecutor.h"

#include "runtime/exec/DriverExecutor.h"
#include "runtime/mpi/AbandonedMemory.h"
#include "runtime/mpi/MpiShmDriver.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

Expected<std::unique_ptr<Executor>> createMpiExecutor(const plan::Plan &P,
                                                      const ProcessPlace &Place,
                                                      const RendezvousAddress &Where,
                                                      ExecutorOptions Opts) {
  if (Error E = checkPlanWorld(P.Program, P.World, Place))
    return E;
  if (std::optional<std::string> Why = rendezvousMismatch("mpi", Where))
    return makeError(ErrorKind::InvalidArgument, *Why);
  // Its waits bound the farewell at MPI's teardown (AbandonedMemory.h).
  mpi::noteMpiWait(Opts.Timeout);
  // Each group's bytes in shared memory where its processes share a host
  // (runtime/shm), through Open MPI elsewhere.
  return startDriverExecutor<mpi::MpiShmDriver>(P, Place.Rank, std::move(Opts));
}

} // namespace collc::rt
