//===- tools/collc/bench/LocalBench.h - Measurements for collc bench -*- C++ -*-===//
//
// What `collc bench` times, side by side in one run: the local backend's
// collectives (ranks as threads), the memory-copy limit of the same machine,
// and plan replays. After a warm-up, an iteration count is chosen to fill the
// time budget; the iterations run in five batches, a batch counts as its
// slowest rank's mean per operation, and the median batch is the figure.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_LOCALBENCH_H
#define COLLC_TOOLS_COLLC_BENCH_LOCALBENCH_H

#include "plan/Plan.h"

#include "llvm/Support/Error.h"

#include <chrono>
#include <string>

namespace collc::rt {

/// Microseconds per all_reduce (f32 sum, out of place) of \p Bytes per rank
/// over \p Ranks threads, each call issued and waited for (like a blocking
/// MPI_Allreduce).
llvm::Expected<double> timeLocalAllReduce(int Ranks, uint64_t Bytes, double BudgetSec);

/// Microseconds for \p Threads threads to each copy \p Bytes at once: the
/// least time an all_reduce of \p Bytes over as many ranks can take, since it
/// must read every input once and write every output once.
double timeParallelMemcpy(int Threads, uint64_t Bytes, double BudgetSec);

/// Median microseconds per step of replaying \p P on the local backend,
/// with the flight record on (the default) or off.
llvm::Expected<double> timePlanReplay(const plan::Plan &P, unsigned Steps, bool Record = true);

/// What the flight record costs a replay of \p P: timePlanReplay with it on
/// and off, in \p Rounds alternating pairs (so that a machine whose load
/// changes weighs on both alike), the median of each.
struct RecordCost {
  double OnUs = 0, OffUs = 0;
  /// The cost as a fraction of the replay without it (negative: within
  /// the noise).
  double overhead() const { return OffUs > 0 ? OnUs / OffUs - 1 : 0; }
};
llvm::Expected<RecordCost> timeRecordCost(const plan::Plan &P, unsigned Steps, unsigned Rounds);

/// timePlanReplay with as many steps (5 to 1000) as fill \p BudgetSec, judged
/// from a short first measurement.
llvm::Expected<double> timePlanReplayFor(const plan::Plan &P, double BudgetSec);

} // namespace collc::rt

#endif
