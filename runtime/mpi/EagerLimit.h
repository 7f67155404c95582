//===- runtime/mpi/EagerLimit.h - How much one eager message carries -*- C++ -*-===//
//
// Open MPI's shared-memory transport sends a message eagerly (copied
// through a fragment, no handshake) only when the message and its headers
// fit its eager limit (btl_vader_eager_limit in Open MPI 4, btl_sm in 5;
// 4096 B by default in both). A message just over it goes by rendezvous, a
// round trip more: measured here between two processes, a 4048-byte
// exchange took 3.7 us against 1.2 us at 4032 bytes.
//
// The limit is read from the environment (OMPI_MCA_btl_vader_eager_limit,
// OMPI_MCA_btl_sm_eager_limit, in Open MPI's syntax: 4096, 0x1000, 4k),
// else Open MPI's default. A value outside 256 B to 1 MiB means no limit
// here: one message, whatever its size. One that Open MPI hangs, crashes
// or computes wrong results with (negative, which it takes for a size near
// 2^64; 2^61 B or more; one this does not read as a size) is refused
// before MPI starts (refuseMisreadEagerLimits). Not through MPI_T: MPI_T_init_thread registers
// every component of every framework, 0.2 s a process here, and resets the
// process's thread level. What this does not see:
// - a limit set in an MCA parameter file. A larger one than assumed splits
//   operands that would have gone eagerly whole (a few more messages); a
//   smaller one sends pieces that each go by rendezvous, slower than the
//   one message they replace.
// - the UCX PML (which Open MPI picks on hosts with InfiniBand), whose
//   traffic between processes of a host does not go through these
//   transports; where OMPI_MCA_pml names it, there is no limit here.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_EAGERLIMIT_H
#define COLLC_RUNTIME_MPI_EAGERLIMIT_H

#include "llvm/Support/Error.h"

#include <cstdint>

namespace collc::rt::mpi {

/// The most payload bytes one message between two processes of this host
/// carries eagerly: the shared-memory eager limit less a margin for the
/// headers (64 B; they take between 49 and 64 of it); 0 for an MPI other
/// than Open MPI.
uint64_t sharedMemoryEagerPayload();

/// Refuses, naming the variable, an eager limit in the environment that
/// Open MPI hangs, crashes or computes wrong results with (a negative one,
/// which it takes for a size near 2^64; one of 2^61 bytes or more; one that
/// is not a size as parseSize reads it); MpiSession asks before MPI starts.
llvm::Error refuseMisreadEagerLimits();

} // namespace collc::rt::mpi

#endif
