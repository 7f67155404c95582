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
  if (Place.World != P.World)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("plan @{0} is for a world of {1}, but {2} says this run has {3} "
                             "processes",
                             P.Program, P.World, Place.Source, Place.World));
  if (Where.How != RendezvousAddress::Kind::Mpi)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("the mpi backend meets through MPI_COMM_WORLD, not rendezvous '{0}' "
                             "(use 'mpi')",
                             Where.text()));
  auto E = std::make_unique<DriverExecutor<mpi::MpiDriver>>(P, Place.Rank, std::move(Opts));
  if (Error Err = E->init())
    return Err;
  return std::unique_ptr<Executor>(std::move(E));
}

} // namespace collc::rt
