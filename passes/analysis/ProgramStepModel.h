//===- passes/analysis/ProgramStepModel.h - A program, for the simulator -*- C++ -*-===//
//
// Translates a program into the step simulator's model (StepSimulator.h):
// one task per compute or communication op in program order, on the ranks
// its `when` and group select; waits are left out (consumers wait on data).
// The passes (bucket{policy=auto}) and `collc simulate FILE` time programs
// through it; plan/analysis/PlanStepModel.h does the same for plans.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_PROGRAMSTEPMODEL_H
#define COLLC_PASSES_ANALYSIS_PROGRAMSTEPMODEL_H

#include "passes/analysis/BufferLayout.h"
#include "passes/analysis/PeakMemory.h"
#include "passes/analysis/StepSimulator.h"

#include "ir/RankMasks.h"

namespace collc {

/// The model of \p P; it borrows \p P's groups. Events name ops (OpId).
SimModel programStepModel(const Program &P, const RankMasks &Masks);

/// Simulates one step of \p P. Fails when the program stalls (run
/// check-cross-rank) or is too large to simulate (world x values over 2^27).
llvm::Expected<SimResult> simulateStep(const Program &P, const SimOptions &Opts);

/// When each op of \p P finishes (latest rank) with communication free: the
/// compute timeline that says when each tensor is ready. By OpId; 0 for ops
/// that run nowhere.
llvm::Expected<std::vector<double>> freeCommFinishUs(const Program &P);

/// The peak communication memory per rank of \p P (PeakMemory.h), its
/// staging from the buffer layout \p P gets with \p Layout, as the plan
/// \p P lowers to would state it.
PeakMemory programPeakMemory(const Program &P, const BufferLayoutOptions &Layout = {});

} // namespace collc

#endif
