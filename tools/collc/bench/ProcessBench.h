//===- tools/collc/bench/ProcessBench.h - collc bench on a process backend -*- C++ -*-===//
//
// `collc bench --backend mpi|gloo` under a launcher: each process measures
// its own rank and rank 0 prints one table, every figure measured in this
// one run:
//  - per size (8 B doubling to --max-bytes): one f32 sum all_reduce as a
//    plan replay on the backend's executor beside the raw engine under it
//    (RawEngine.h) on the same bytes, and their ratio;
//  - N all_reduces of 4 KiB replayed fused by the compiler against issued
//    one by one, and their ratio.
// Each pair of ways (raw and replay; one by one and fused) is timed in
// pairs, back to back, the order alternating, so a burst of load on a
// shared host slows a pair rather than one side; each iteration counts as
// its slowest rank. Per side: the median iteration and its interquartile
// spread; between the sides: the median over pairs of their ratio (or
// difference, at 8 B) with its 95% interval (MedianInterval.h), on which
// the targets of issue 11 are judged: met, MISSED, or undecided when the
// interval straddles the target. Beside each row, how long the busiest
// rank's threads waited for a CPU (HostLoad.h), and the load average.
// Every rank runs the same number of pairs, decided between chunks from
// every rank's time so far (at least MinPairs, about --time-per-size per
// side), or they deadlock.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_PROCESSBENCH_H
#define COLLC_TOOLS_COLLC_BENCH_PROCESSBENCH_H

#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

#include "plan/Plan.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>
#include <string>

namespace collc::tool {

struct ProcessBenchOptions {
  std::string Backend;
  rt::ProcessPlace Place;
  rt::RendezvousAddress Where;
  std::chrono::milliseconds Timeout;
  uint64_t MaxBytes = 64ull << 20;
  /// Seconds measured per size, per side (at least 30 pairs each).
  double BudgetSec = 0.05;
  unsigned ReplayOps = 1000;
};

class RawEngine;

/// `collc bench --calibrate|--validate --backend mpi|gloo`: replays plans on
/// this process's rank, every rank with the same plans in the same order,
/// and times them as the bench does (iteration counts agreed from every
/// rank; the median of the slowest rank's times), so every rank gets the
/// same figure.
class ProcessReplayTimer {
public:
  static llvm::Expected<std::unique_ptr<ProcessReplayTimer>>
  create(const ProcessBenchOptions &O);
  ~ProcessReplayTimer();
  /// Microseconds per step of \p P.
  llvm::Expected<double> time(const plan::Plan &P, double BudgetSec);
  /// Returns once every rank has called it.
  llvm::Error barrier();
  int64_t rank() const { return O.Place.Rank; }

private:
  ProcessReplayTimer(const ProcessBenchOptions &O, std::unique_ptr<RawEngine> E);
  ProcessBenchOptions O;
  std::unique_ptr<RawEngine> Engine; ///< carries the timing traffic
  unsigned Replays = 0;              ///< names each executor's communicators
};

/// Runs this process's rank of the bench; returns the exit code.
int benchThisProcessRank(const ProcessBenchOptions &O, llvm::raw_ostream &Out,
                         llvm::raw_ostream &Err);

} // namespace collc::tool

#endif
