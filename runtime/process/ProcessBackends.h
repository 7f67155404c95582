//===- runtime/process/ProcessBackends.h - Backends with one process per rank -*- C++ -*-===//
//
// The table of backends whose ranks are processes (mpi, gloo, nccl): their
// names, what each needs alive in the process (MPI's session), what each
// needs on this host before it meets the others (nccl: a GPU), and how each
// creates the executor of this process's rank, an rt::Executor like every
// other. `collc run --backend` and the C API's collcExecutorCreate both read
// it and never ask which backend they hold. A backend this build lacks is
// named with the package that brings it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_PROCESS_PROCESSBACKENDS_H
#define COLLC_RUNTIME_PROCESS_PROCESSBACKENDS_H

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/interfaces/EagerComm.h"
#include "runtime/verify/ReductionBound.h"

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <memory>
#include <string>

namespace collc::rt {

/// "mpi, gloo, nccl": the process backends, for messages and --help.
std::string processBackendNames();

bool isProcessBackend(llvm::StringRef Backend);

/// Where the executors of \p Backend keep their memory (nccl: the
/// device's; the local backend and the others: the host's), built or not.
MemoryKind backendMemory(llvm::StringRef Backend);

/// How \p Backend's reductions may differ from the rank-ordered reference:
/// MPI's, Gloo's and NCCL's algorithms combine ranks in their own order
/// and may accumulate narrow floats in their own type; the local
/// backend's are the reference's.
ReductionOrder reductionOrderOf(llvm::StringRef Backend);

/// Whether this build has \p Backend, or why not ("collc was built without
/// the mpi backend (apt-get install ...)"), or that no backend has the name.
llvm::Error checkProcessBackendBuilt(llvm::StringRef Backend);

/// Refuses, naming where it came from, a world of more processes than
/// \p Backend takes (gloo: 65536), before a program is compiled for it.
llvm::Error checkProcessWorld(llvm::StringRef Backend, const ProcessPlace &Place);

/// What a process of \p Backend needs on this host, checked before it
/// meets the others, so that a host that cannot run it says so at once
/// (nccl: a CUDA GPU, "no CUDA GPU: ...").
llvm::Error checkProcessHost(llvm::StringRef Backend);

/// What \p Backend cannot run, judged from plan \p P alone, so that every
/// rank refuses it alike and at once (nccl: a plan whose ranks' comm
/// streams would wait for each other: runtime/nccl/StreamOrderCheck.h).
/// Every rank runs it once, before createProcessExecutor.
llvm::Error checkProcessPlan(llvm::StringRef Backend, const plan::Plan &P);

/// The same for \p Backend, "local" or a process backend, whether this
/// build has it or not (`collc compile --backend`: the plan may run on
/// another machine); an unknown name is an error that lists the names.
llvm::Error checkPlanForBackend(llvm::StringRef Backend, const plan::Plan &P);

/// Starts what \p Backend needs in this process (MPI's initialization); the
/// result must outlive every executor of the backend (null: nothing).
llvm::Expected<std::shared_ptr<void>> startProcessBackend(llvm::StringRef Backend);

/// The backend whose session a run of \p Backend meeting at \p Where needs
/// alive (mpi under --backend mpi or --rendezvous mpi), or "" for none.
llvm::StringRef sessionBackendFor(llvm::StringRef Backend, const RendezvousAddress &Where);

/// Starts MPI when \p Backend or \p Where needs it (sessionBackendFor): the
/// returned handle finalizes it when released (null when not needed).
llvm::Expected<std::shared_ptr<void>> startSessionFor(llvm::StringRef Backend,
                                                      const RendezvousAddress &Where);

/// The executor of \p Place's rank of \p P on \p Backend, its peers met
/// through \p Where (the session of startSessionFor held); \p P has passed
/// checkProcessPlan.
llvm::Expected<std::unique_ptr<Executor>>
createProcessExecutor(llvm::StringRef Backend, const plan::Plan &P, const ProcessPlace &Place,
                      const RendezvousAddress &Where, ExecutorOptions Opts);

/// This process's eager communicator (runtime/interfaces/EagerComm.h: what a
/// torch.distributed process group runs on) as \p Place's rank of group
/// \p Name on \p Backend, its peers met through \p Where (the session of
/// startSessionFor held), every wait bounded by \p Timeout. A backend
/// without eager collectives (nccl) is refused as Unsupported.
llvm::Expected<std::unique_ptr<EagerComm>>
createProcessEagerComm(llvm::StringRef Backend, const ProcessPlace &Place,
                       const RendezvousAddress &Where, llvm::StringRef Name,
                       std::chrono::milliseconds Timeout);

} // namespace collc::rt

#endif
