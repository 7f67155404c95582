//===- runtime/nccl/NcclStepWait.h - Waiting for an NCCL executor's steps -*- C++ -*-===//
//
// The waits of an NcclExecutor (NcclExecutor.h) for its steps: bounded,
// polling every communicator (CommStreamWait.h), and on failure naming the
// op it waited for (the first comm of this rank whose done event has not
// happened, with its source location), the step and the communicator.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLSTEPWAIT_H
#define COLLC_RUNTIME_NCCL_NCCLSTEPWAIT_H

#include "runtime/nccl/CommStreamWait.h"
#include "runtime/nccl/NcclResources.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <optional>

namespace collc::rt::nccl {

/// Waits for the work on \p R's comm stream, the \p Steps steps replayed so
/// far in \p Phase; bounded by the executor's timeout, or by \p Limit. A
/// failure calls \p Abort (CommStreamWait.h).
llvm::Error waitForSteps(const NcclResources &R, llvm::StringRef Phase, uint64_t Steps,
                         std::optional<std::chrono::milliseconds> Limit, AbortFn Abort);

/// Never blocks: success, or the first communicator's asynchronous error or
/// abort.
llvm::Error commsHealth(const NcclResources &R);

} // namespace collc::rt::nccl

#endif
