//===- runtime/mpi/MpiAdapters.cpp - The three interfaces on the mpi backend -===//

#include "runtime/mpi/MpiAdapters.h"

#include "runtime/interfaces/DriverCommunicator.h"
#include "runtime/interfaces/HostEagerComm.h"

#include <mpi.h>

using namespace llvm;

namespace collc::rt {

Expected<std::shared_ptr<Communicator>>
createMpiCommunicator(StringRef GroupName, size_t Size, size_t Rank, CommunicatorOptions Opts) {
  return createDriverCommunicator<mpi::MpiDriver>(GroupName, Size, Rank, Opts);
}

Expected<std::unique_ptr<EagerComm>> createMpiEagerComm(StringRef GroupName, size_t Size,
                                                        size_t Rank,
                                                        std::chrono::milliseconds Timeout) {
  return createHostEagerComm<mpi::MpiDriver>(GroupName, Size, Rank, Timeout);
}

template class HostSession<mpi::MpiDriver>;
template class HostServer<mpi::MpiDriver>;

/// The world's size, or 0 before MPI is ready (the join then says why).
static size_t worldSize() {
  int Init = 0, Fin = 0, N = 0;
  MPI_Initialized(&Init);
  MPI_Finalized(&Fin);
  if (!Init || Fin)
    return 0;
  MPI_Comm_size(MPI_COMM_WORLD, &N);
  return size_t(N);
}

MpiServer::MpiServer(DeviceId Device) : HostServer<mpi::MpiDriver>(Device, worldSize()) {}

} // namespace collc::rt
