//===- runtime/Executor.cpp - The executor on the local backend ------------===//

#include "runtime/Executor.h"

#include "runtime/DriverExecutor.h"
#include "runtime/local/LocalDriver.h"

using namespace llvm;

namespace collc::rt {

Executor::~Executor() = default;

Expected<std::unique_ptr<Executor>> createLocalExecutor(const plan::Plan &Plan, int64_t Rank,
                                                        ExecutorOptions Opts) {
  auto E = std::make_unique<DriverExecutor<local::LocalDriver>>(Plan, Rank, std::move(Opts));
  if (Error Err = E->init())
    return Err;
  return std::unique_ptr<Executor>(std::move(E));
}

} // namespace collc::rt
