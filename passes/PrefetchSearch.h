//===- passes/PrefetchSearch.h - Each unit's gather launch under a budget -*- C++ -*-===//
//
// How far ahead each unit's parameter gathers launch when the schedule has a
// memory budget (schedule{memory-budget=BYTES}). As XLA's latency-hiding
// scheduler hoists a collective only while it tracks the memory that keeps
// live, the choice is judged by the simulated step (analysis/StepSimulator.h,
// on the given link) and the peak communication memory per rank
// (analysis/PeakMemory.h) of the program scheduled that way:
//
//  1. one depth for every unit: of 1, 2, 3, 4, 6, 8, ... and unbounded, the
//     shortest step whose peak fits (steps within a microsecond are equal;
//     then the least memory);
//  2. then unit by unit, in program order: first one unit later wherever
//     that costs neither step time nor peak (memory the step does not
//     need), then earlier, up to three units, while the step gets shorter
//     and the peak fits (memory spent where it hides communication);
//  3. the same from the fastest uniform depth over the budget, when it is
//     faster than 2's result, with its first phase free of the budget:
//     freeing what its units do not need may bring it within the budget
//     at its speed. The shorter of 2 and 3 wins.
// At most about 2 x log(units) + 8 x units simulated steps.
//
// Deterministic: the candidates and their order come from the program alone.
// A budget no schedule meets (not even one unit ahead everywhere, the least
// memory) is reported with the least demanding schedule's figures.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_PREFETCHSEARCH_H
#define COLLC_PASSES_PREFETCHSEARCH_H

#include "passes/analysis/BufferLayout.h"
#include "passes/analysis/CostModel.h"
#include "passes/analysis/PeakMemory.h"

#include "ir/Program.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace collc {

struct PrefetchSearchOptions {
  uint64_t Budget = 0;
  LinkClass Link = defaultLinkClass();
  BufferLayoutOptions Layout;
  /// What the schedule does after prefetch (every collective async, its wait
  /// before the first use), so a candidate is judged as it would run.
  llvm::function_ref<void(Program &)> LaunchAsync;
};

struct PrefetchChoice {
  bool Fits = false;
  /// When it fits: the depth per unit (0: where its gathers stand) and the
  /// uniform depth the search started from (0: unbounded).
  std::vector<unsigned> DepthOfUnit;
  unsigned Uniform = 0;
  /// Per unit, why it differs from Uniform (empty where it does not).
  std::vector<std::string> WhyOfUnit;
  double StepUs = 0;
  PeakMemory Peak;
  unsigned UnitsChanged = 0;
  unsigned Simulations = 0;
  /// When it does not fit: the least demanding schedule, its peak and depth.
  std::unique_ptr<Program> Least;
  PeakMemory LeastPeak;
  unsigned LeastDepth = 0;
};

/// Chooses each unit's prefetch depth of \p P (not yet scheduled) under
/// \p Opts.Budget. Fails only when a candidate cannot be simulated.
llvm::Expected<PrefetchChoice> searchPrefetch(const Program &P, const PrefetchSearchOptions &Opts);

} // namespace collc

#endif
