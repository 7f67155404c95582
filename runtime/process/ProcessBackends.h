//===- runtime/process/ProcessBackends.h - Backends with one process per rank -*- C++ -*-===//
//
// The table of backends whose ranks are processes (mpi, gloo, nccl): their
// names, what each needs alive in the process, and how each host backend
// creates the executor of this process's rank (nccl runs on a GPU with an
// executor of its own, which tools/collc/NcclRun.h and the C API's
// api/NcclDevice.cpp create). `collc run --backend` and the C API's
// collcExecutorCreate both read it. A backend this build lacks is named
// with the package that brings it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_PROCESS_PROCESSBACKENDS_H
#define COLLC_RUNTIME_PROCESS_PROCESSBACKENDS_H

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace collc::rt {

/// "mpi, gloo, nccl": the process backends, for messages and --help.
std::string processBackendNames();

bool isProcessBackend(llvm::StringRef Backend);

/// A backend with a GPU executor of its own (nccl), built or not.
bool backendRunsOnDevice(llvm::StringRef Backend);

/// Whether this build has \p Backend, or why not ("collc was built without
/// the mpi backend (apt-get install ...)"), or that no backend has the name.
llvm::Error checkProcessBackendBuilt(llvm::StringRef Backend);

/// Refuses, naming where it came from, a world of more processes than
/// \p Backend takes (gloo: 65536), before a program is compiled for it.
llvm::Error checkProcessWorld(llvm::StringRef Backend, const ProcessPlace &Place);

/// Starts what \p Backend needs in this process (MPI's initialization); the
/// result must outlive every executor of the backend (null: nothing).
llvm::Expected<std::shared_ptr<void>> startProcessBackend(llvm::StringRef Backend);

/// The executor of \p Place's rank of \p P on host backend \p Backend, its
/// peers met through \p Where.
llvm::Expected<std::unique_ptr<Executor>>
createProcessExecutor(llvm::StringRef Backend, const plan::Plan &P, const ProcessPlace &Place,
                      const RendezvousAddress &Where, ExecutorOptions Opts);

} // namespace collc::rt

#endif
