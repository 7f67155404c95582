//===- runtime/mpi/AbandonedMemory.h - Memory a given-up request may write -*- C++ -*-===//
//
// MPI cannot cancel a collective. When a wait gives up at its deadline, the
// request stays in MPI and may still write its buffers (a late peer
// arrives), after the group, the executor and the stream are gone. Such
// memory is handed here and kept until the process ends.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_ABANDONEDMEMORY_H
#define COLLC_RUNTIME_MPI_ABANDONEDMEMORY_H

#include <memory>

namespace collc::rt::mpi {

/// Keeps \p Memory until the process exits: a request that may still write
/// it was given up.
void keepForAbandonedRequest(std::shared_ptr<void> Memory);

} // namespace collc::rt::mpi

#endif
