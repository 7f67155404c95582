//===- runtime/local/LocalExecutor.cpp - The executor on the local backend -===//

#include "runtime/local/LocalExecutor.h"

#include "runtime/exec/DriverExecutor.h"
#include "runtime/local/LocalDriver.h"

using namespace llvm;

namespace collc::rt {

Expected<std::unique_ptr<Executor>> createLocalExecutor(const plan::Plan &Plan, int64_t Rank,
                                                        ExecutorOptions Opts) {
  return startDriverExecutor<local::LocalDriver>(Plan, Rank, std::move(Opts));
}

} // namespace collc::rt
