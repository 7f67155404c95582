//===- runtime/mpi/AbandonedMemory.h - What giving up on MPI leaves behind -*- C++ -*-===//
//
// MPI cannot cancel a collective. When a wait gives up at its deadline, the
// request stays in MPI and may still write its buffers (a late peer
// arrives), after the group, the executor and the stream are gone. Such
// memory is handed here and kept until the process ends.
//
// Giving up also leaves MPI itself unsettled: this process's collectives
// may no longer pair with its peers', and MPI's collective teardown
// (MPI_Win_free, MPI_Finalize) waits for every process of the world, so a
// peer that stopped would hold this one there for as long as it stays
// stopped. So the MpiSession first says farewell (a non-blocking barrier
// of its own, bounded by farewellWithin()): when every process comes, MPI
// is torn down as usual; when one does not (it stopped, or its transport,
// shared memory among them, lost it), MPI is left as it is: the process
// ends without MPI_Finalize, and mpirun, seeing it, ends the job's other
// processes.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_ABANDONEDMEMORY_H
#define COLLC_RUNTIME_MPI_ABANDONEDMEMORY_H

#include <chrono>
#include <memory>

namespace collc::rt::mpi {

/// Keeps \p Memory until the process exits: a request that may still write
/// it was given up.
void keepForAbandonedRequest(std::shared_ptr<void> Memory);

/// An executor of this process waits up to \p Timeout for its peers.
void noteMpiWait(std::chrono::milliseconds Timeout);
/// How long the farewell waits for the other processes: the longest
/// timeout of an executor or a group of this process, else the runtime's
/// default timeout.
std::chrono::milliseconds farewellWithin();

} // namespace collc::rt::mpi

#endif
