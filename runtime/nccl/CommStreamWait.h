//===- runtime/nccl/CommStreamWait.h - A bounded wait for a comm stream -*- C++ -*-===//
//
// The one way the NCCL backend waits for work on a stream: it never blocks
// in CUDA (a dead peer would hold cudaStreamSynchronize forever), it polls
// the stream and every communicator's asynchronous error, and it ends at a
// deadline with an error that names what was waited for and what each
// communicator issued last.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_COMMSTREAMWAIT_H
#define COLLC_RUNTIME_NCCL_COMMSTREAMWAIT_H

#include "runtime/nccl/NcclMembership.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <optional>
#include <string>

namespace collc::rt::nccl {

/// What a failed wait does to the communicators, given why: by default
/// each is aborted; an executor, whose CUDA graphs must go before its
/// communicators (BrokenState.h), breaks itself instead.
using AbortFn = llvm::function_ref<void(const std::string &Why)>;

/// Waits for the work on \p S, polling every communicator in \p Comms, up
/// to the smallest of their timeouts (defaultTimeout() without any); past
/// it, or at a communicator's asynchronous error, it calls \p Abort (null:
/// aborts them all). \p Context names what was being waited for in errors.
/// With \p Limit the wait ends there instead, with a Timeout error that
/// leaves the communicators up (a caller's bounded synchronize, which may
/// wait again).
llvm::Error waitForStream(cudaStream_t S, llvm::ArrayRef<NcclMembership *> Comms,
                          const std::string &Context,
                          std::optional<std::chrono::milliseconds> Limit = std::nullopt,
                          AbortFn Abort = nullptr);

} // namespace collc::rt::nccl

#endif
