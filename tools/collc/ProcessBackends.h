//===- tools/collc/ProcessBackends.h - Backends with one process per rank -*- C++ -*-===//
//
// What the tool adds to the runtime's table of process backends
// (runtime/process/ProcessBackends.h): the reduction order `collc run`
// checks results with, and the raw engine `collc bench` sets beside each
// backend (bench/RawEngine.h).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_PROCESSBACKENDS_H
#define COLLC_TOOLS_COLLC_PROCESSBACKENDS_H

#include "runtime/process/ProcessBackends.h"
#include "runtime/verify/ReductionBound.h"

#include <chrono>

namespace collc::tool {

using rt::createProcessExecutor;
using rt::isProcessBackend;
using rt::processBackendNames;
using rt::startProcessBackend;

/// How the backend's reductions may differ from the rank-ordered reference
/// (MPI's, Gloo's and NCCL's algorithms combine ranks in their own order).
rt::ReductionOrder reductionOrderOf(llvm::StringRef Backend);

class RawEngine;

/// The raw engine under \p Backend for this process (bench/RawEngine.h).
llvm::Expected<std::unique_ptr<RawEngine>> createRawEngine(llvm::StringRef Backend,
                                                           const rt::ProcessPlace &Place,
                                                           const rt::RendezvousAddress &Where,
                                                           std::chrono::milliseconds Timeout);

} // namespace collc::tool

#endif
