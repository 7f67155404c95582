//===- runtime/mpi/MpiExecutor.cpp - The executor on the mpi backend -------===//

#include "runtime/mpi/MpiExecutor.h"

#include "runtime/exec/DriverExecutor.h"
#include "runtime/mpi/MpiDriver.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

Expected<std::unique_ptr<Executor>> createMpiExecutor(const plan::Plan &P,
                                                      const ProcessPlace &Place,
                                                      const RendezvousAddress &Where,
                                                      ExecutorOptions Opts) {
  if (Error E = checkPlanWorld(P.Program, P.World, Place))
    return E;
  if (Where.How != RendezvousAddress::Kind::Mpi)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("the mpi backend meets through MPI_COMM_WORLD, not rendezvous '{0}' "
                             "(from {1}; use 'mpi')",
                             Where.text(), Where.Source));
  return startDriverExecutor<mpi::MpiDriver>(P, Place.Rank, std::move(Opts));
}

} // namespace collc::rt
