//===- runtime/exec/Executor.h - Capture a plan, replay it every step -*- C++ -*-===//
//
// The one executor interface, which every backend implements (local, mpi,
// gloo, nccl), as c10d's Backend is one interface for NCCL, Gloo and MPI:
// whoever runs a plan (`collc run`, the C API, Python, the benches) holds
// an Executor and never asks which backend it is. What a backend cannot do
// is an error of kind Unsupported that names the backend and the operation
// (the defaults below), not a branch in the caller.
//
// An executor binds a plan to memory, captures it once and replays it per
// step, on one rank:
//  - bind: each tensor the plan communicates lives either in a view slot of a
//    plan buffer (the model writes it there: zero copy; see tensor()) or in
//    caller memory bound by name, of the executor's memory() kind (host
//    memory, or the GPU's for nccl). A wrong size, an unknown name or a
//    missing binding is an error that names the tensor. bindOwnMemory()
//    gives every tensor left unbound zeroed memory the executor owns.
//  - capture: joins the plan's groups, resolves every step of this rank
//    (host backends: a flat instruction list of pointers, offsets, counts
//    and communicators; nccl: CUDA graphs on its comm stream) and, before
//    the first replay, compares every rank's plan digest
//    (all_gather_words); a mismatch refuses to run and names the ranks.
//  - replay: one step. Every compute of this rank is called back in plan
//    order; a launch packs its bucket and enqueues its collective on the
//    comm stream, a wait waits for it and unpacks. On the host a step has
//    ended when replay returns; on a device the callback enqueues the
//    model's work on the caller's stream (setStream) and the step is
//    ordered between that work and what the caller enqueues next, so
//    synchronize() waits for it.
//
//   auto Exec = createLocalExecutor(Plan, Rank);    // runtime/local/LocalExecutor.h
//   (*Exec)->bind("x", X.data(), X.size() * 4);
//   (*Exec)->capture();
//   for (int Step = 0; Step != Steps; ++Step)
//     (*Exec)->replay([&](const plan::Compute &C, uint32_t) { return runLayer(C); });
//   (*Exec)->synchronize();
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_EXECUTOR_H
#define COLLC_RUNTIME_EXEC_EXECUTOR_H

#include "plan/Plan.h"
#include "runtime/exec/FlightRecord.h"
#include "runtime/exec/FlightRecordDump.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/Timeout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>
#include <optional>
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
  /// The device a device backend runs on; -1: the launcher's local rank
  /// modulo the devices this process sees. A host backend refuses any other.
  int Device = -1;
  /// The flight record: on by default, dumped where Record.Dir says
  /// (runtime/exec/FlightRecord.h).
  RecordOptions Record;
};

/// Where an executor's bindings, views and tensor() addresses live.
enum class MemoryKind { Host, Device };
llvm::StringRef memoryKindName(MemoryKind K);

/// A measured event of a replay, for Chrome traces.
struct TraceEvent {
  std::string Name;
  const char *Category; ///< "compute", "launch", "wait", "pack", "unpack"
  double StartUs;
  double DurUs;
};

/// The path a group's bytes take (runtime/shm/PathChoice.h), as an
/// executor reports it.
struct GroupPath {
  std::string Group; ///< "the world", "@dp", "@tp#1" (subgroup 1)
  int64_t Processes = 0;
  std::string Path; ///< "shm", "hierarchical", "engine"
  std::string Why;
  /// This rank is the group's rank 0 (the one to print it, so that each
  /// group is printed once).
  bool Leads = false;
};
/// "group @dp (4 processes): shm: WHY".
std::string describe(const GroupPath &P);

/// Called at every compute step of this rank with the compute and its index.
using ComputeCallback = llvm::function_ref<llvm::Error(const plan::Compute &, uint32_t)>;

class RecordSignalEnrollment;

class Executor {
public:
  /// Out of line, as the destructor: they see RecordSignalEnrollment whole.
  Executor();
  virtual ~Executor();

  // --- What it is --------------------------------------------------------------
  virtual int64_t rank() const = 0;
  virtual const plan::Plan &plan() const = 0;
  /// The backend it runs on ("local", "mpi", "gloo", "nccl"): for messages,
  /// and what a backend's own accessors check before they look inside
  /// (llvm::dyn_cast, DriverExecutor::classof).
  virtual llvm::StringRef backend() const = 0;
  virtual MemoryKind memory() const { return MemoryKind::Host; }

  // --- Memory ------------------------------------------------------------------
  /// Binds tensor \p Name (`g0` or `%g0`) to \p Bytes of memory of kind
  /// memory().
  virtual llvm::Error bind(llvm::StringRef Name, void *Data, uint64_t Bytes) = 0;
  /// Binds every tensor of unboundTensors() to zeroed memory of kind
  /// memory() that the executor owns: what a run without a model (`collc
  /// run`, the benches, the fuzzers) gives it.
  virtual llvm::Error bindOwnMemory() = 0;
  /// Where tensor \p Name lives (its view slot or its binding), in memory
  /// of kind memory(): readable by the host only where that is Host.
  virtual llvm::Expected<llvm::MutableArrayRef<char>> tensor(llvm::StringRef Name) = 0;
  /// The tensors this rank's steps touch that are neither views nor bound.
  virtual std::vector<std::string> unboundTensors() const = 0;
  /// The tensors this rank's steps touch (views and bindings alike).
  virtual std::vector<uint32_t> touchedTensors() const = 0;
  /// Host bytes into tensor \p Tensor (its whole size), ordered before
  /// what the step does next: on a device, on the caller's stream.
  virtual llvm::Error copyIn(uint32_t Tensor, llvm::ArrayRef<char> From);
  /// Tensor \p Tensor's bytes into host memory, once the work ordered
  /// before it is done.
  virtual llvm::Error copyOut(uint32_t Tensor, llvm::MutableArrayRef<char> To);
  /// The stream the caller computes on (a cudaStream_t for nccl): a step is
  /// ordered after the work enqueued there and before what comes next.
  /// Host backends have none: Unsupported.
  virtual llvm::Error setStream(void *Stream);

  // --- Running -----------------------------------------------------------------
  /// Resolves the plan for this rank; before the first capture, compares plan
  /// digests with every rank. A collective: every rank captures at the same
  /// point (on mpi each capture also sets calls up together). Binding again
  /// requires capturing again. Nothing is replayable after one that fails.
  virtual llvm::Error capture() = 0;
  /// One step (see the header comment).
  virtual llvm::Error replay(ComputeCallback RunCompute) = 0;
  /// Waits for the steps replayed so far and reports a peer lost since.
  /// Without \p Within, bounded by the executor's timeout, past which the
  /// executor is broken (its communicators aborted: every later call
  /// refused); with it, waits at most \p Within (0: only checks) and, past
  /// it, leaves the executor as it was, so the caller may wait again. On
  /// the host a step has ended with its replay: this reports health().
  virtual llvm::Error synchronize(std::optional<std::chrono::milliseconds> Within = std::nullopt);
  /// Never blocks; names a lost peer.
  virtual llvm::Error health() const = 0;
  /// Collective over the plan's world, outside any step (nothing of a
  /// replay may be in flight): every rank's \p Mine, in rank order. For the
  /// figures a run gathers from its ranks (step times, what each verified).
  virtual llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Mine) = 0;
  /// What the run did not exercise, for the user (a one-rank world has no
  /// inter-rank path). None by default.
  virtual std::vector<std::string> notes() const;
  /// Which path carries each group's bytes, and why, for the world and
  /// each group this rank is in: what `collc run` and `collc bench` print
  /// (describe(), each group by the rank that Leads it). None where the
  /// backend has one path (the default).
  virtual std::vector<GroupPath> paths() const;
  /// Which driver a DriverExecutor runs on (an address unique to its
  /// instantiation), for llvm::dyn_cast; null for the others.
  virtual const void *driverTag() const { return nullptr; }

  /// The host-side events of the last replays (ExecutorOptions::Trace);
  /// none where the backend records none (its factory refuses Trace).
  virtual const std::vector<TraceEvent> &trace() const;
  virtual void clearTrace();

  // --- The flight record (runtime/exec/FlightRecord.h) ----------------------------
  /// This rank's record of its last comm events: every backend keeps one.
  const FlightRecorder &flightRecord() const { return *Record; }
  /// Writes the record now into \p Dir (empty: the executor's
  /// RecordOptions::Dir), as a dump for \p Why; an error when there is no
  /// directory, or names the file that could not be written.
  llvm::Error dumpFlightRecord(llvm::StringRef Dir = "", DumpReason Why = DumpReason::Request) const;
  /// Where the record is dumped from now on, as RecordOptions::Dir and
  /// DumpAtExit say (an empty \p Dir: nowhere). Not while a step runs.
  void setRecordPlace(llvm::StringRef Dir, bool AtExit);

protected:
  /// Starts this executor's flight record (every backend's constructor
  /// does): with a dump directory it is dumped on SIGUSR1 too.
  void startRecord(std::unique_ptr<FlightRecorder> R);
  FlightRecorder &record() { return *Record; }
  /// What every backend does with an error that ends an operation of the
  /// rank (a capture, a replay, a wait): recordFailure (FlightRecordDump.h)
  /// on this executor's record, \p Blamed the world rank it blames (-1:
  /// nobody; nullopt: the error's own peer, which is a world rank).
  llvm::Error failed(llvm::Error E, std::optional<int64_t> Blamed);

  /// The error of an operation this backend does not offer: kind
  /// Unsupported, naming the backend and \p What.
  llvm::Error unsupported(const llvm::Twine &What) const;
  /// Tensor \p T's home (tensor()), checked to be \p Bytes long: what
  /// copyIn and copyOut move; \p Verb says which in an error.
  llvm::Expected<llvm::MutableArrayRef<char>> homeForCopy(uint32_t T, uint64_t Bytes,
                                                          llvm::StringRef Verb);

private:
  // Withdrawn from SIGUSR1 (Enrolled) before the record goes.
  std::unique_ptr<FlightRecorder> Record;
  std::unique_ptr<RecordSignalEnrollment> Enrolled;
};

} // namespace collc::rt

#endif
