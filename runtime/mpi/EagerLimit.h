//===- runtime/mpi/EagerLimit.h - How much one eager message carries -*- C++ -*-===//
//
// Open MPI's shared-memory transport sends a message eagerly (copied
// through a fragment, no handshake) only when the message and its headers
// fit its eager limit (btl_vader_eager_limit, 4096 B by default; btl_sm in
// Open MPI 5). A message just over it goes by rendezvous, a round trip
// more: measured here between two processes, a 4048-byte exchange took 3.7
// us against 1.2 us at 4032 bytes. The limit is read through MPI's tool
// interface (MPI_T), as the user's MCA settings left it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_EAGERLIMIT_H
#define COLLC_RUNTIME_MPI_EAGERLIMIT_H

#include <cstdint>

namespace collc::rt::mpi {

/// The most payload bytes one message between two processes of this host
/// carries eagerly: the shared-memory eager limit less a margin for the
/// headers (64 B; they take between 49 and 64 of it); 0 where MPI does not
/// say. Read once, after MPI_Init.
uint64_t sharedMemoryEagerPayload();

} // namespace collc::rt::mpi

#endif
