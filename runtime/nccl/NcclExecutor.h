//===- runtime/nccl/NcclExecutor.h - A plan captured in CUDA graphs -*- C++ -*-===//
//
// The NCCL backend's executor, for one rank on one GPU: an rt::Executor
// (runtime/exec/Executor.h) whose memory is the GPU's. It walks the very
// lowering that `collc dump --format nccl` prints (NcclLowering.h):
//  - create(): the setup (NcclResources.h). One communicator, the world's
//    root, is made from a unique id (UniqueIdExchange), non-blocking; every
//    communicator that carries traffic is split from it, blocking, in one
//    order on every rank; plan buffers, events, premul_sum ops and a stream
//    of its own for the model's work (until setStream() names the
//    caller's) follow.
//  - bind(): model tensors that are not zero-copy views of a plan buffer are
//    device memory bound by name (a wrong size or an unknown name is an
//    error that names it). Binding again re-captures at the next replay.
//  - capture(): checks (the NCCL version, one GPU per capturing thread, no
//    communicator in error, nothing unbound), the plan-digest handshake,
//    the eager warm-up (after the caller's work; every communicator, op and
//    peer connected), then the capture of the comm stream into CUDA graphs
//    in thread-local mode, instantiated once (NcclGraphs.h).
//  - replay(compute): one step. Each compute of this rank is called back in
//    plan order (it enqueues the model's work on the caller's stream) and
//    its ready event is recorded there; then the graphs are launched on the
//    comm stream, forked from and joined back to the caller's stream.
//  - replayGraphs(): the graphs alone; the model records readyEvent(compute)
//    after each compute itself, and waits on doneEvent(tensor) before using
//    a result.
//  - enqueueInto(stream): the same step issued as calls on the comm stream,
//    forked from and joined back to the caller's stream: for frameworks
//    that capture a whole training step into their own graph. That graph
//    holds the communicators as the executor's own do: the caller destroys
//    it before the executor.
//  - synchronize(): waits for the comm stream with the executor's timeout,
//    polling every communicator's asynchronous error, and names the op,
//    the step and the communicator (NcclStepWait.h). synchronize(Within)
//    names them too and leaves the executor as it was.
//  - breaking (BrokenState.h): a wait past the executor's timeout, an
//    asynchronous error, or a blocking call past the watchdog's deadline
//    (Watchdog.h) breaks the executor, once: its graphs are destroyed, then
//    its communicators aborted (NCCL's abort waits until no graph holds a
//    communicator). Every path that issues work then refuses, naming why.
//
//   auto X = NcclExecutor::create(Plan, Rank, {.Device = Rank});
//   (*X)->bind("act.in", DevPtr, Bytes);
//   (*X)->capture();
//   for (...) { enqueue compute, cudaEventRecord((*X)->readyEvent(...)) ...;
//               (*X)->replayGraphs(); wait on (*X)->doneEvent(...) ...; }
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLEXECUTOR_H
#define COLLC_RUNTIME_NCCL_NCCLEXECUTOR_H

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/Timeout.h"
#include "runtime/nccl/NcclExecutorOptions.h"
#include "runtime/nccl/NcclLowering.h"

#include "llvm/Support/Error.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace collc::rt::nccl {

class NcclExecutor : public Executor {
public:
  /// Refuses a plan whose ranks' comm streams would wait for each other
  /// (checkStreamOrder), then sets up rank \p Rank of \p P.
  static llvm::Expected<std::unique_ptr<NcclExecutor>>
  create(const plan::Plan &P, int64_t Rank, NcclExecutorOptions Opts = {});
  /// The same with \p L, lowerForRank(P, Rank), of a plan its caller has
  /// checked already (checkStreamOrder, as checkProcessPlan does).
  static llvm::Expected<std::unique_ptr<NcclExecutor>>
  create(const plan::Plan &P, int64_t Rank, NcclRankPlan L, NcclExecutorOptions Opts);
  ~NcclExecutor() override;

  static constexpr llvm::StringLiteral Name = "nccl";
  /// LLVM-style RTTI over the one executor interface.
  static bool classof(const Executor *X) { return X->backend() == Name; }

  virtual const NcclRankPlan &rankPlan() const = 0;
  virtual cudaStream_t commStream() const = 0;

  /// The event the model records after compute \p Compute (without '@').
  virtual llvm::Expected<cudaEvent_t> readyEvent(llvm::StringRef Compute) const = 0;
  /// The event recorded once the comm producing \p Tensor is complete.
  virtual llvm::Expected<cudaEvent_t> doneEvent(llvm::StringRef Tensor) const = 0;

  /// One step from the graphs alone (captures first if needed), ordered
  /// by the ready events the model records. Returns once enqueued.
  virtual llvm::Error replayGraphs() = 0;
  /// One step as individual calls on the comm stream (no graph): the eager
  /// baseline.
  virtual llvm::Error runEager() = 0;
  /// One step as calls on the comm stream, ordered after the work on
  /// \p Caller and before anything \p Caller does next; if \p Caller is
  /// being captured, the step becomes part of the caller's graph.
  virtual llvm::Error enqueueInto(cudaStream_t Caller) = 0;
  virtual uint64_t steps() const = 0;
};

} // namespace collc::rt::nccl

#endif
