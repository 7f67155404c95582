//===- tools/collc/CpuWorld.h - MPI and the CPU world of a process run -*- C++ -*-===//
//
// What the process path of `collc run` composes from the host backends:
//  - the MPI session a process holds for the whole run when the run goes
//    through MPI (--backend mpi, or --rendezvous mpi);
//  - for a backend with no host executor (nccl), the run's CPU world as a
//    WorldGather: MPI_COMM_WORLD under `--rendezvous mpi`, else a Gloo world
//    on the store the address names (file:DIR or redis://HOST:PORT).
// A backend this build lacks is an error naming the package that brings it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_CPUWORLD_H
#define COLLC_TOOLS_COLLC_CPUWORLD_H

#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/launch/WorldGather.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>

namespace collc::tool {

/// Starts MPI when \p Backend or \p Where needs it: the returned handle
/// finalizes it when released (null when MPI is not needed).
llvm::Expected<std::shared_ptr<void>> startMpiIfNeeded(llvm::StringRef Backend,
                                                       const rt::RendezvousAddress &Where);

/// Joins the run's CPU world as group \p Name (MPI needs startMpiIfNeeded
/// first), every wait bounded by \p Timeout.
llvm::Expected<std::unique_ptr<rt::WorldGather>> joinCpuWorld(const rt::ProcessPlace &Place,
                                                              const rt::RendezvousAddress &Where,
                                                              llvm::StringRef Name,
                                                              std::chrono::milliseconds Timeout);

} // namespace collc::tool

#endif
