//===- runtime/local/LocalExecutor.h - The executor on the local backend --*- C++ -*-===//
#ifndef COLLC_RUNTIME_LOCAL_LOCALEXECUTOR_H
#define COLLC_RUNTIME_LOCAL_LOCALEXECUTOR_H

#include "runtime/exec/Executor.h"

namespace collc::rt {

/// An executor for rank \p Rank of \p Plan on the local backend (ranks are
/// threads of this process). The plan must outlive it.
llvm::Expected<std::unique_ptr<Executor>> createLocalExecutor(const plan::Plan &Plan, int64_t Rank,
                                                              ExecutorOptions Opts = {});

} // namespace collc::rt

#endif
