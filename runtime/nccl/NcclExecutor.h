//===- runtime/nccl/NcclExecutor.h - A plan captured in CUDA graphs -*- C++ -*-===//
//
// The NCCL backend's executor, for one rank on one GPU. It walks the very
// lowering that `collc dump --format nccl` prints (NcclLowering.h):
//  - create(): the setup. Communicators are created eagerly and
//    non-blocking, in one order on every rank, their unique ids shared by
//    UniqueIdExchange; plan buffers, events and premul_sum ops follow.
//  - bind(): model tensors that are not zero-copy views of a plan buffer are
//    device memory bound by name (a wrong size or an unknown name is an
//    error that names it). Binding again re-captures at the next replay.
//  - capture(): checks (NCCL >= 2.9.6, one GPU per capturing thread, no
//    communicator in error, nothing unbound), the plan-digest handshake,
//    the eager warm-up (every communicator, op and peer connected), then
//    the capture of the comm stream into CUDA graphs in thread-local mode,
//    instantiated once.
//  - replay(): one step = one cudaGraphLaunch per graph on the comm stream
//    (and, between graphs, the eager all_to_all_v of runtime split sizes).
//    The model records readyEvent(compute) after each compute before it
//    calls replay(), and waits on doneEvent(tensor) before using a result.
//  - enqueueInto(stream): the same step issued as calls on the comm stream,
//    forked from and joined back to the caller's stream: for frameworks
//    that capture a whole training step into their own graph.
//  - replayOn(stream): replay() fenced by events to and from the caller's
//    stream (the C API's nccl executor).
//  - synchronize(): waits for the comm stream with a deadline, polling
//    every communicator's asynchronous error; on timeout it aborts them and
//    names the op, the step and the communicator. synchronizeWithin(limit)
//    names them too but leaves the communicators up.
//
//   auto X = NcclExecutor::create(Plan, Rank, {.Device = Rank});
//   (*X)->bind("act.in", DevPtr, Bytes);
//   (*X)->capture();
//   for (...) { enqueue compute, cudaEventRecord((*X)->readyEvent(...)) ...;
//               (*X)->replay(); wait on (*X)->doneEvent(...) ...; }
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLEXECUTOR_H
#define COLLC_RUNTIME_NCCL_NCCLEXECUTOR_H

#include "plan/Plan.h"
#include "runtime/nccl/NcclLowering.h"
#include "runtime/exec/Timeout.h"

#include "llvm/Support/Error.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

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
};

class NcclExecutor {
public:
  static llvm::Expected<std::unique_ptr<NcclExecutor>>
  create(const plan::Plan &P, int64_t Rank, NcclExecutorOptions Opts = {});
  virtual ~NcclExecutor();

  virtual const Lowering &lowering() const = 0;
  virtual cudaStream_t commStream() const = 0;

  /// Binds tensor \p Name (without '%') to \p Bytes of device memory.
  virtual llvm::Error bind(llvm::StringRef Name, void *Device, uint64_t Bytes) = 0;
  /// Where tensor \p Name lives on the device: its view slot or binding.
  virtual llvm::Expected<void *> tensor(llvm::StringRef Name) const = 0;
  virtual std::vector<std::string> unboundTensors() const = 0;

  /// The event the model records after compute \p Compute (without '@').
  virtual llvm::Expected<cudaEvent_t> readyEvent(llvm::StringRef Compute) const = 0;
  /// The event recorded once the comm producing \p Tensor is complete.
  virtual llvm::Expected<cudaEvent_t> doneEvent(llvm::StringRef Tensor) const = 0;

  virtual llvm::Error capture() = 0;
  /// One step from the graphs (captures first if needed). Returns once
  /// enqueued.
  virtual llvm::Error replay() = 0;
  /// One step as individual calls on the comm stream (no graph): the eager
  /// baseline.
  virtual llvm::Error runEager() = 0;
  /// One step as calls on the comm stream, ordered after the work on
  /// \p Caller and before anything \p Caller does next; if \p Caller is
  /// being captured, the step becomes part of the caller's graph.
  virtual llvm::Error enqueueInto(cudaStream_t Caller) = 0;
  /// replay(), ordered after the work enqueued on \p Caller so far, and
  /// the work \p Caller gets next after the step (events, as enqueueInto):
  /// the step of a caller that computes on one stream (the C API's).
  virtual llvm::Error replayOn(cudaStream_t Caller) = 0;
  /// Waits for the step, with the deadline and the health checks.
  virtual llvm::Error synchronize() = 0;
  /// Waits at most \p Limit; past it, a Timeout error names the step and
  /// the op still pending and leaves the communicators up, so the caller
  /// may wait again (synchronize() aborts them at its deadline).
  virtual llvm::Error synchronizeWithin(std::chrono::milliseconds Limit) = 0;
  /// Never blocks.
  virtual llvm::Error health() const = 0;
  virtual uint64_t steps() const = 0;
  /// What the run did not exercise (a one-rank world has no inter-rank path).
  virtual std::vector<std::string> notes() const = 0;
};

} // namespace collc::rt::nccl

#endif
