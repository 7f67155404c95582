//===- runtime/nccl/NcclExecutorOptions.h - How an NCCL executor is made -*- C++ -*-===//
//
// The options of NcclExecutor::create (NcclExecutor.h), apart so that the
// executor's parts (NcclResources.h) read them without the executor.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLEXECUTOROPTIONS_H
#define COLLC_RUNTIME_NCCL_NCCLEXECUTOROPTIONS_H

#include "runtime/exec/Timeout.h"
#include "runtime/launch/WorldGather.h"

#include <chrono>
#include <memory>
#include <string>

namespace collc::rt::nccl {

class UniqueIdExchange;

struct NcclExecutorOptions {
  int Device = 0;
  /// Prefix of the communicator keys: every rank of one run uses the same
  /// one, two runs that share an exchange use different ones.
  std::string CommPrefix = "plan";
  /// Every wait of this executor (Timeout.h): COLLC_TIMEOUT_MS, else 300 s.
  std::chrono::milliseconds Timeout = defaultTimeout();
  bool DigestHandshake = true;
  /// Null: the in-process table (ranks are threads of this process).
  UniqueIdExchange *Ids = nullptr;
  /// The run's CPU world, over which allGatherWords() gathers (null: over
  /// the plan's world communicator, on the GPU).
  WorldGather *World = nullptr;
  /// What the executor keeps alive until its communicators are gone (the
  /// CPU world and the id table a process run made for it).
  std::shared_ptr<void> Keep = nullptr;
};

} // namespace collc::rt::nccl

#endif
