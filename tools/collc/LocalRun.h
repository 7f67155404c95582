//===- tools/collc/LocalRun.h - A plan run on local ranks, checked -*- C++ -*-===//
//
// What `collc run` does with a plan, for it and for the fuzzers: every rank
// a thread of this process with its own local executor (runRank is one
// rank's part, which a process of a multi-process run does alone); tensors that are not
// views in memory of the run's own; each compute writes the deterministic
// synthetic data of its outputs (runtime/verify/SyntheticData.h); the steps
// are replayed and timed; afterwards every result of every rank can be
// checked against the independent reference (runtime/verify/PlanChecker.h).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_LOCALRUN_H
#define COLLC_TOOLS_COLLC_LOCALRUN_H

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/verify/PlanChecker.h"

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
  std::vector<std::unique_ptr<rt::Executor>> Execs;     ///< per rank (null if not created)
  std::vector<std::vector<std::vector<char>>> Storage; ///< per rank: its bound tensors
};

/// Binds every tensor \p X needs that no plan buffer holds to memory of the
/// caller's own, appended to \p Storage and filled with \p Fill: what the
/// run, the bench and the fuzzers give an executor in place of a model.
llvm::Error bindOwnMemory(const plan::Plan &P, rt::Executor &X,
                          std::vector<std::vector<char>> &Storage, char Fill = 0);

/// What rank \p R's comms send in one step (a recv: what it receives).
uint64_t bytesMovedByRank(const plan::Plan &P, int64_t R);

/// What one rank of a run does, on any backend: binds memory of its own
/// (bindOwnMemory), captures, and replays \p Steps steps whose computes
/// write the synthetic data of their outputs; records in \p Res its step
/// times and bytes moved, or why it stopped.
void runRank(const plan::Plan &P, rt::Executor &X, unsigned Steps, bool Trace,
             std::vector<std::vector<char>> &Storage, LocalRun::Rank &Res);

/// Runs \p P for \p Steps steps, a thread per rank (the plan's world must
/// not exceed the local backend's), and returns what each rank measured or
/// why it stopped. Never throws: a thread that cannot start is a rank error.
LocalRun runOnLocalRanks(const plan::Plan &P, const rt::ExecutorOptions &Opts, unsigned Steps);

/// Compares every result of every rank of a run that succeeded with the
/// reference; an error names the first tensor and rank that differ.
llvm::Expected<rt::CheckSummary> checkLocalRun(const plan::Plan &P, const LocalRun &Run);

} // namespace collc::tool

#endif
