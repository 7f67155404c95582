//===- tools/collc/LocalRun.h - A plan run on local ranks, checked -*- C++ -*-===//
//
// What `collc run` does with a plan, for it and for the fuzzers: every rank
// a thread of this process with its own local executor (runRank is one
// rank's part, which a process of a multi-process run does alone, on any
// backend); tensors that are not views in memory the executor owns
// (bindOwnMemory); each compute writes the deterministic synthetic data of
// its outputs (runtime/verify/SyntheticData.h); the steps are replayed and
// timed; afterwards every result of every rank can be checked against the
// independent reference (runtime/verify/PlanChecker.h), read through a
// HostView whatever the executor's memory.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_LOCALRUN_H
#define COLLC_TOOLS_COLLC_LOCALRUN_H

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "tools/collc/InjectedFault.h"
#include "runtime/verify/PlanChecker.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace collc::tool {

struct LocalRun {
  struct Rank {
    std::vector<double> StepUs; ///< per replayed step
    uint64_t BytesMoved = 0;    ///< what this rank's comms send (recv: receive)
    std::string Error;          ///< empty: the rank ran every step
  };
  std::vector<Rank> Ranks;
  std::vector<std::unique_ptr<rt::Executor>> Execs; ///< per rank (null if not created)
};

/// An executor's tensors as host bytes, whatever its memory: its own where
/// that is host memory, else a copy (Executor::copyOut) kept as long as
/// the view. What the reference checker reads.
class HostView {
public:
  explicit HostView(rt::Executor &X) : X(X) {}
  /// Tensor \p T's bytes; empty where it has no home on this rank or
  /// cannot be read.
  llvm::ArrayRef<char> operator()(uint32_t T);

private:
  rt::Executor &X;
  std::map<uint32_t, std::vector<char>> Copies;
};

/// What rank \p R's comms send in one step (a recv: what it receives).
uint64_t bytesMovedByRank(const plan::Plan &P, int64_t R);

/// What one rank of a run does, on any backend: binds memory of the
/// executor's own (bindOwnMemory), captures, and replays \p Steps steps
/// whose computes write the synthetic data of their outputs, each timed
/// until the step is done (synchronize); records in \p Res its step times
/// and bytes moved, or why it stopped. \p Fault: one a test injects at a
/// point of the steps (InjectedFault.h).
void runRank(const plan::Plan &P, rt::Executor &X, unsigned Steps, bool Trace,
             LocalRun::Rank &Res, const InjectedFault *Fault = nullptr);

/// Runs \p P for \p Steps steps, a thread per rank (the plan's world must
/// not exceed the local backend's), and returns what each rank measured or
/// why it stopped. Never throws: a thread that cannot start is a rank error.
/// Where a rank's thread or executor cannot start, no rank runs a step (and
/// those that could start say nothing).
LocalRun runOnLocalRanks(const plan::Plan &P, const rt::ExecutorOptions &Opts, unsigned Steps);

/// Compares every result of every rank of a run that succeeded with the
/// reference; an error names the first tensor and rank that differ.
llvm::Expected<rt::CheckSummary> checkLocalRun(const plan::Plan &P, const LocalRun &Run);

} // namespace collc::tool

#endif
