//===- passes/analysis/OverlapBound.h - Perfect-overlap bound -*- C++ -*-===//
//
// The shortest step, and least exposed communication, that any bucketing,
// order and schedule of a program's communication can reach on a link
// class, for the program's computes. Every communication moves its bytes
// after its inputs are ready (the timeline with free communication in any
// order: nothing is ready sooner) on its rank's one comm stream, paying at
// least one alpha. So an op that uses the results of communications S
// cannot start before
//   max over i in S of  ready(i) + alpha + sum of cost(j), j in S ready no earlier than i
// (whatever is ready at or after i is still to be sent then), and no rank's
// step ends before the same sum over all it sends. One run of the step
// simulator, with communication free and unordered, holds each such op back
// to that time as it is reached, so a hold delays what follows (a chain of
// compute, collective, compute adds up). It leaves out what only makes a
// real plan slower: contention between communications that feed different
// ops beyond the per-rank sum, the fence of a blocking collective.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_OVERLAPBOUND_H
#define COLLC_PASSES_ANALYSIS_OVERLAPBOUND_H

#include "passes/analysis/CostModel.h"

#include "llvm/Support/Error.h"

#include <algorithm>

namespace collc {

struct OverlapBound {
  double StepUs = 0;        ///< the shortest step any plan can simulate
  double ComputeOnlyUs = 0; ///< the step with free communication
  /// The earliest the last op that waits for communication may start. If
  /// the compute after it (DDP: the optimizer) were split to overlap the
  /// communication too, a change to the program's compute that no bucketing
  /// makes, the step still could not end before it.
  double CommDoneUs = 0;
  double exposedUs() const { return StepUs - ComputeOnlyUs; }
  /// The exposed comm no plan can beat even with that compute split.
  double exposedWithSplitTailUs() const { return std::max(0.0, CommDoneUs - ComputeOnlyUs); }
};

/// The perfect-overlap bound of \p P on \p Link; fails as simulateStep does.
llvm::Expected<OverlapBound> perfectOverlapBound(const Program &P, const LinkClass &Link);

} // namespace collc

#endif
