//===- tools/collc/ProcessBackends.h - Backends with one process per rank -*- C++ -*-===//
//
// The table of backends whose ranks are processes (mpi, gloo, nccl): what
// `collc run --backend` accepts besides local, how each host backend
// creates the executor of this process's rank (nccl runs on a GPU through
// NcclRun.h), and the raw engine `collc bench` sets beside it
// (bench/RawEngine.h). A backend this build lacks is named with what brings
// it.
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

/// "mpi, gloo, nccl": the process backends, for messages and --help.
std::string processBackendNames();

bool isProcessBackend(llvm::StringRef Backend);

/// A backend with a GPU executor of its own (nccl), built or not.
bool backendRunsOnDevice(llvm::StringRef Backend);

/// How the backend's reductions may differ from the rank-ordered reference
/// (MPI's, Gloo's and NCCL's algorithms combine ranks in their own order).
rt::ReductionOrder reductionOrderOf(llvm::StringRef Backend);

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
