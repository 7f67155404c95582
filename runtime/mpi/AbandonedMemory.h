//===- runtime/mpi/AbandonedMemory.h - What giving up on MPI leaves behind -*- C++ -*-===//
//
// MPI cannot cancel a collective. When a wait gives up at its deadline, the
// request stays in MPI and may still write its buffers (a late peer
// arrives), after the group, the executor and the stream are gone. Such
// memory is handed here and kept until the process ends.
//
// Giving up also leaves MPI itself unsettled: this process's collectives
// no longer pair with its peers', and MPI's collective teardown
// (MPI_Win_free, MPI_Finalize) waits for every process of the world, so a
// peer that stopped would hold this one there for as long as it stays
// stopped. The MpiSession asks gaveUpOnMpi() and then first says farewell
// (a non-blocking barrier of its own, bounded by farewellWithin()): when
// every process comes, MPI is torn down as usual; when one does not, MPI is
// left as it is: the process ends without MPI_Finalize, and mpirun, seeing
// it, ends the job's other processes.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_ABANDONEDMEMORY_H
#define COLLC_RUNTIME_MPI_ABANDONEDMEMORY_H

#include <chrono>
#include <memory>

namespace collc::rt::mpi {

/// Keeps \p Memory until the process exits: a request that may still write
/// it was given up (which is also noteGaveUpOnMpi()).
void keepForAbandonedRequest(std::shared_ptr<void> Memory);

/// This process gave up on an MPI operation: a request left pending at its
/// deadline, or a group broken by a failure (whose timeout, \p Waited, the
/// farewell takes too).
void noteGaveUpOnMpi();
void noteGaveUpOnMpi(std::chrono::milliseconds Waited);
/// Whether it did, at any time since the process started.
bool gaveUpOnMpi();
/// How long the farewell waits for the other processes: the longest
/// timeout of a group that gave up, else the runtime's default timeout.
std::chrono::milliseconds farewellWithin();

} // namespace collc::rt::mpi

#endif
