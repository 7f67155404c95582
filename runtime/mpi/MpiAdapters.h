//===- runtime/mpi/MpiAdapters.h - The three interfaces on the mpi backend -*- C++ -*-===//
//
// The three interface adapters, instantiated on the mpi driver (one process per
// rank; an MpiSession must be held, runtime/mpi/MpiSession.h):
//   - createMpiCommunicator: a Communicator over MPI_COMM_WORLD; split() is
//     MPI_Comm_split, so any subgroup is one call away;
//   - MpiDistributedSession: the DistributedSession (MpiSession already names MPI's
//     lifetime in this directory);
//   - MpiServer: the ServerCommunication, one server per process.
//
// Groups: MPI builds a group other than its world only by a split that
// every process calls. The communicator and the session are the world (a
// Size and Rank other than MPI_COMM_WORLD's are refused, naming both); the
// server, whose collectives only the listed devices call, serves only the
// group of every process and refuses any other as Unsupported.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_MPIADAPTERS_H
#define COLLC_RUNTIME_MPI_MPIADAPTERS_H

#include "runtime/mpi/MpiDriver.h"
#include "runtime/interfaces/Communicator.h"
#include "runtime/interfaces/EagerComm.h"
#include "runtime/interfaces/HostServer.h"
#include "runtime/interfaces/HostSession.h"

#include <chrono>
#include <memory>

namespace collc::rt {

/// This process's communicator over MPI_COMM_WORLD: \p Size and \p Rank
/// must be the world's.
llvm::Expected<std::shared_ptr<Communicator>> createMpiCommunicator(llvm::StringRef GroupName,
                                                                    size_t Size, size_t Rank,
                                                                    CommunicatorOptions Opts = {});

/// MpiDistributedSession::create(Name, World, Rank, Timeout): the world.
using MpiDistributedSession = HostSession<mpi::MpiDriver>;
extern template class HostSession<mpi::MpiDriver>;

extern template class HostServer<mpi::MpiDriver>;
/// A server per process. Device ids order the ranks as everywhere (a
/// device's rank is its place in the sorted list), so they must sort in
/// world-rank order: the simplest is the world rank itself.
class MpiServer : public HostServer<mpi::MpiDriver> {
public:
  explicit MpiServer(DeviceId Device);
};

/// This process's eager communicator (runtime/interfaces/EagerComm.h) in group
/// \p GroupName, every wait bounded by \p Timeout.
llvm::Expected<std::unique_ptr<EagerComm>> createMpiEagerComm(llvm::StringRef GroupName,
                                                              size_t Size, size_t Rank,
                                                              std::chrono::milliseconds Timeout);

} // namespace collc::rt

#endif
