//===- runtime/exec/Executor.h - Capture a plan, replay it every step -*- C++ -*-===//
//
// The executor binds a plan to memory, captures it once and replays it per
// step, on one rank:
//  - bind: each tensor the plan communicates lives either in a view slot of a
//    plan buffer (the model writes it there: zero copy; see tensor()) or in
//    caller memory bound by name. A wrong size, an unknown name or a missing
//    binding is an error that names the tensor.
//  - capture: joins the plan's groups, resolves every step of this rank into
//    a flat instruction list (pointers, offsets, counts, communicators), and
//    before the first replay compares every rank's plan digest
//    (all_gather_words); a mismatch refuses to run and names the ranks.
//  - replay: walks the instructions. A compute step calls back into the
//    model; a launch packs the bucket and enqueues its collective on the comm
//    stream (so a bucket launches once its last input is ready); a wait
//    blocks until the collective is done and unpacks (so consumers see its
//    results).
//
//   auto Exec = createLocalExecutor(Plan, Rank);    // runtime/local/LocalExecutor.h
//   (*Exec)->bind("x", X.data(), X.size() * 4);
//   (*Exec)->capture();
//   for (int Step = 0; Step != Steps; ++Step)
//     (*Exec)->replay([&](const plan::Compute &C, uint32_t) { return runLayer(C); });
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_EXECUTOR_H
#define COLLC_RUNTIME_EXEC_EXECUTOR_H

#include "plan/Plan.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/Timeout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace collc::rt {

struct ExecutorOptions {
  /// Prefix of the group ids the executor joins; every rank of one run uses
  /// the same prefix, and two runs in one process use different ones.
  std::string CommPrefix = "plan";
  /// Every wait (runtime/exec/Timeout.h: COLLC_TIMEOUT_MS, else 300 s).
  std::chrono::milliseconds Timeout = defaultTimeout();
  /// Record host-side events of each replay (trace()).
  bool Trace = false;
  /// Compare plan digests across ranks before the first replay.
  bool DigestHandshake = true;
};

/// A measured event of a replay, for Chrome traces.
struct TraceEvent {
  std::string Name;
  const char *Category; ///< "compute", "launch", "wait", "pack", "unpack"
  double StartUs;
  double DurUs;
};

/// Called at every compute step of this rank with the compute and its index.
using ComputeCallback = llvm::function_ref<llvm::Error(const plan::Compute &, uint32_t)>;

class Executor {
public:
  virtual ~Executor();
  virtual int64_t rank() const = 0;
  virtual const plan::Plan &plan() const = 0;
  /// The backend it runs on, its driver's name ("local", "gloo", "mpi"):
  /// what a backend's own accessors check before they look inside
  /// (llvm::dyn_cast, DriverExecutor::classof).
  virtual llvm::StringRef backend() const = 0;

  /// Binds tensor \p Name (`g0` or `%g0`) to \p Bytes of caller memory.
  virtual llvm::Error bind(llvm::StringRef Name, void *Data, uint64_t Bytes) = 0;
  /// Where tensor \p Name lives: its view slot or its binding.
  virtual llvm::Expected<llvm::MutableArrayRef<char>> tensor(llvm::StringRef Name) = 0;
  /// The tensors this rank's steps touch that are neither views nor bound.
  virtual std::vector<std::string> unboundTensors() const = 0;
  /// The tensors this rank's steps touch (views and bindings alike).
  virtual std::vector<uint32_t> touchedTensors() const = 0;

  /// Resolves the plan for this rank; before the first capture, compares plan
  /// digests with every rank. A collective: every rank captures at the same
  /// point (on mpi each capture also sets calls up together). Binding again
  /// requires capturing again. Nothing is replayable after one that fails.
  virtual llvm::Error capture() = 0;
  /// One step.
  virtual llvm::Error replay(ComputeCallback RunCompute) = 0;
  /// Never blocks; names a lost peer.
  virtual llvm::Error health() const = 0;
  /// Collective over the plan's world, outside any step (nothing of a
  /// replay may be in flight): every rank's \p Mine, in rank order. For the
  /// figures a run gathers from its ranks (step times, what each verified).
  virtual llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Mine) = 0;

  virtual const std::vector<TraceEvent> &trace() const = 0;
  virtual void clearTrace() = 0;
};

} // namespace collc::rt

#endif
