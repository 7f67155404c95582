//===- plan/analysis/PlanStepModel.h - A plan, for the simulator ------*- C++ -*-===//
//
// Translates a plan into the step simulator's model
// (passes/analysis/StepSimulator.h), so that `collc simulate PLAN` and
// `collc dump --format trace` time a plan file, without its source, by the
// rules that time programs: one task per compute or launch step in step
// order, on the step's ranks; wait steps are left out (a comm's completion
// already sets its results' times).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PLAN_ANALYSIS_PLANSTEPMODEL_H
#define COLLC_PLAN_ANALYSIS_PLANSTEPMODEL_H

#include "passes/analysis/PeakMemory.h"
#include "passes/analysis/StepSimulator.h"

#include "plan/Plan.h"

namespace collc {

/// The model of \p P; it borrows \p P's groups. Events name a compute
/// (IsComm false) or a comm by its index in \p P.
SimModel planStepModel(const plan::Plan &P);

/// Simulates one step of \p P. Fails when its steps stall or it is too
/// large to simulate (world x tensors over 2^27).
llvm::Expected<SimResult> simulatePlan(const plan::Plan &P, const SimOptions &Opts);

/// The peak communication memory per rank of \p P (PeakMemory.h).
PeakMemory planPeakMemory(const plan::Plan &P);

} // namespace collc

#endif
