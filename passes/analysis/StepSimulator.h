//===- passes/analysis/StepSimulator.h - One training step, simulated -*- C++ -*-===//
//
// Simulates one step of a program on every rank: each compute op runs on its
// compute stream in program order, starting when its stream is free and its
// inputs are ready; each collective runs on the rank's one comm stream and
// starts when every member has issued it (and its inputs are ready); a
// send/recv pair starts when both sides have. A collective that is not
// `async` makes the rank's compute streams wait for it (eager semantics);
// an `async` one overlaps until its results are used.
//
// The step time is the latest finish over all ranks; exposed communication
// is the step time minus the step time with free communication.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_COST_STEPSIMULATOR_H
#define COLLC_COMPILER_COST_STEPSIMULATOR_H

#include "passes/analysis/CostModel.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace collc {

struct SimEvent {
  int64_t Rank;
  OpId Op;
  bool IsComm;
  uint32_t Stream; ///< compute stream; unused for comm
  double StartUs;
  double DurUs;
};

struct SimResult {
  double StepUs = 0;
  double ComputeOnlyStepUs = 0;
  double ExposedCommUs = 0;
  double CommBusyUs = 0; ///< on the slowest rank
  int64_t SlowestRank = 0;
  std::vector<SimEvent> Events; ///< when requested
};

struct SimOptions {
  LinkClass Link = defaultLinkClass();
  bool RecordEvents = false;
};

/// Fails when the program stalls (run check-cross-rank) or is too large to
/// simulate (world x values over 2^27).
llvm::Expected<SimResult> simulateStep(const Program &P, const SimOptions &Opts);

} // namespace collc

#endif
