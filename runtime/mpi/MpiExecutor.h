//===- runtime/mpi/MpiExecutor.h - The executor on the mpi backend --*- C++ -*-===//
#ifndef COLLC_RUNTIME_MPI_MPIEXECUTOR_H
#define COLLC_RUNTIME_MPI_MPIEXECUTOR_H

#include "runtime/exec/Executor.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

namespace collc::rt {

/// An executor for this process's rank of \p P on the mpi backend. \p Place
/// must agree with the plan's world and with MPI_COMM_WORLD; \p Where must
/// be `mpi` (the processes meet through MPI_COMM_WORLD). An MpiSession must
/// be held (runtime/mpi/MpiSession.h). The plan must outlive the executor.
llvm::Expected<std::unique_ptr<Executor>> createMpiExecutor(const plan::Plan &P,
                                                            const ProcessPlace &Place,
                                                            const RendezvousAddress &Where,
                                                            ExecutorOptions Opts = {});

} // namespace collc::rt

#endif
