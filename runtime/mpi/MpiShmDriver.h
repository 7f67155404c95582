//===- runtime/mpi/MpiShmDriver.h - The mpi backend with shared memory -*- C++ -*-===//
//
// What the mpi backend's executor runs on: each group's bytes in shared
// memory where its processes share a host, hierarchically where it spans
// hosts, through Open MPI elsewhere (runtime/shm/ShmDriver.h).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_MPISHMDRIVER_H
#define COLLC_RUNTIME_MPI_MPISHMDRIVER_H

#include "runtime/mpi/MpiDriver.h"
#include "runtime/shm/ShmDriver.h"

namespace collc::rt::mpi {

using MpiShmDriver = shm::ShmDriver<MpiDriver>;
static_assert(ExecutorDriver<MpiShmDriver>);

} // namespace collc::rt::mpi

#endif
