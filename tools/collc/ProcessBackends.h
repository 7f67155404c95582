//===- tools/collc/ProcessBackends.h - Backends with one process per rank -*- C++ -*-===//
//
// The table of backends whose ranks are processes (mpi, gloo): what
// `collc run --backend` accepts besides local, how each creates the
// executor of this process's rank, and the raw engine `collc bench` sets
// beside it (bench/RawEngine.h). A backend this build lacks is named with
// the package that brings it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_PROCESSBACKENDS_H
#define COLLC_TOOLS_COLLC_PROCESSBACKENDS_H

#include "compiler/plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/verify/ReductionBound.h"

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <memory>
#include <string>

namespace collc::tool {

/// "mpi, gloo": the process backends, for messages and --help.
std::string processBackendNames();

bool isProcessBackend(llvm::StringRef Backend);

/// How the backend's reductions may differ from the rank-ordered reference
/// (MPI's and Gloo's algorithms combine ranks in their own order).
rt::ReductionOrder reductionOrderOf(llvm::StringRef Backend);

/// Starts what \p Backend needs in this process (MPI's initialization); the
/// result must outlive every executor of the backend (null: nothing).
llvm::Expected<std::shared_ptr<void>> startProcessBackend(llvm::StringRef Backend);

/// The executor of \p Place's rank of \p P on \p Backend, its peers met
/// through \p Where.
llvm::Expected<std::unique_ptr<rt::Executor>>
createProcessExecutor(llvm::StringRef Backend, const plan::Plan &P, const rt::ProcessPlace &Place,
                      const rt::RendezvousAddress &Where, rt::ExecutorOptions Opts);

class RawEngine;

/// The raw engine under \p Backend for this process (bench/RawEngine.h).
llvm::Expected<std::unique_ptr<RawEngine>> createRawEngine(llvm::StringRef Backend,
                                                           const rt::ProcessPlace &Place,
                                                           const rt::RendezvousAddress &Where,
                                                           std::chrono::milliseconds Timeout);

} // namespace collc::tool

#endif
