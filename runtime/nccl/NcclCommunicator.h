//===- runtime/nccl/NcclCommunicator.h - the Communicator on NCCL -------*- C++ -*-===//
//
// The Communicator adapter over the NCCL driver: one per rank, each on its
// own GPU and thread in this process (ranks in other processes join through
// the driver with a shared unique id). Buffers passed to it are device
// memory; every call returns once its collective has run (bounded by the
// timeout: a dead peer aborts the communicator with an error). The default
// options take the backend's timeout (Timeout.h: COLLC_TIMEOUT_MS, else
// 300 s).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLCOMMUNICATOR_H
#define COLLC_RUNTIME_NCCL_NCCLCOMMUNICATOR_H

#include "runtime/exec/Timeout.h"
#include "runtime/interfaces/Communicator.h"

namespace collc::rt::nccl {

llvm::Expected<std::shared_ptr<Communicator>>
createNcclCommunicator(llvm::StringRef GroupName, size_t Size, size_t Rank, int Device,
                       CommunicatorOptions Opts = {defaultTimeout()});

} // namespace collc::rt::nccl

#endif
