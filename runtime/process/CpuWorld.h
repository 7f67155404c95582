//===- runtime/process/CpuWorld.h - The CPU world of a process run -*- C++ -*-===//
//
// The CPU world of a process run, composed from the host backends: what
// the processes of `collc run` meet in before the plan is made, and where
// the nccl backend's ranks share their unique ids. A WorldGather over
// MPI_COMM_WORLD under `--rendezvous mpi`, else a Gloo world on the store
// the address names (file:DIR or redis://HOST:PORT).
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

/// Joins the run's CPU world as group \p Name (MPI needs its session
/// first: ProcessBackends.h, startSessionFor), every wait bounded by
/// \p Timeout.
llvm::Expected<std::unique_ptr<WorldGather>> joinCpuWorld(const ProcessPlace &Place,
                                                          const RendezvousAddress &Where,
                                                          llvm::StringRef Name,
                                                          std::chrono::milliseconds Timeout);

} // namespace collc::rt

#endif
