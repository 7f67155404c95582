//===- runtime/process/CpuWorld.h - MPI and the CPU world of a process run -*- C++ -*-===//
//
// What a process of a run composes from the host backends (the process
// path of `collc run`, and the C API's nccl executors):
//  - the MPI session a process holds for the whole run when the run goes
//    through MPI (--backend mpi, or --rendezvous mpi);
//  - for a backend with no host executor (nccl), the run's CPU world as a
//    WorldGather: MPI_COMM_WORLD under `--rendezvous mpi`, else a Gloo world
//    on the store the address names (file:DIR or redis://HOST:PORT).
// A backend this build lacks is an error naming the package that brings it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_PROCESS_CPUWORLD_H
#define COLLC_RUNTIME_PROCESS_CPUWORLD_H

#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/launch/WorldGather.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>

namespace collc::rt {

/// Starts MPI when \p Backend or \p Where needs it: the returned handle
/// finalizes it when released (null when MPI is not needed).
llvm::Expected<std::shared_ptr<void>> startMpiIfNeeded(llvm::StringRef Backend,
                                                       const RendezvousAddress &Where);

/// Joins the run's CPU world as group \p Name (MPI needs startMpiIfNeeded
/// first), every wait bounded by \p Timeout.
llvm::Expected<std::unique_ptr<WorldGather>> joinCpuWorld(const ProcessPlace &Place,
                                                          const RendezvousAddress &Where,
                                                          llvm::StringRef Name,
                                                          std::chrono::milliseconds Timeout);

} // namespace collc::rt

#endif
