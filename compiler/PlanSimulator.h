//===- compiler/PlanSimulator.h - One step of a plan, simulated --*- C++ -*-===//
//
// The plan-file twin of cost/StepSimulator (which works on the IR, for the
// passes): same timing rules, but driven by the plan's steps, so that
// `collc simulate` and `collc dump --format trace` can explain a plan file
// without its source. Every rank walks its steps; computes run on their
// streams; a comm starts when every member launched it and its inputs are
// ready, and runs on the rank's comm stream; a blocking comm fences the
// compute streams.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_PLANSIMULATOR_H
#define COLLC_COMPILER_PLANSIMULATOR_H

#include "passes/analysis/CostModel.h"
#include "compiler/plan/Plan.h"

namespace collc {

struct PlanSimEvent {
  int64_t Rank;
  bool IsComm;
  uint32_t Index; ///< into Computes or Comms
  uint32_t Stream;
  double StartUs, DurUs;
};

struct PlanSimResult {
  double StepUs = 0, ComputeOnlyStepUs = 0, ExposedCommUs = 0, CommBusyUs = 0;
  int64_t SlowestRank = 0;
  std::vector<PlanSimEvent> Events;
};

llvm::Expected<PlanSimResult> simulatePlan(const plan::Plan &P, const LinkClass &Link,
                                           bool RecordEvents);

/// The cost model's time for comm \p C of \p P on a group of \p N ranks.
double commTimeUs(const plan::Plan &P, const plan::Comm &C, int64_t N, const LinkClass &Link);

} // namespace collc

#endif
