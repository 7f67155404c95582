//===- runtime/exec/StepWalk.h - The steps one rank runs ----------*- C++ -*-===//
//
// Every executor and the NCCL lowering walk a plan the same way: its steps
// in plan order, keeping those whose compute or comm runs on the rank. The
// order is the plan's, identical on every rank, which is what keeps ranks
// pairing the same collectives.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_STEPWALK_H
#define COLLC_RUNTIME_EXEC_STEPWALK_H

#include "plan/Plan.h"

#include <cstddef>
#include <vector>

namespace collc::rt {

/// The indices into P.Steps of the steps rank \p Rank runs, in plan order.
inline std::vector<size_t> stepsOfRank(const plan::Plan &P, int64_t Rank) {
  std::vector<size_t> Out;
  for (size_t S = 0; S != P.Steps.size(); ++S)
    if (P.ranksOf(P.Steps[S]).contains(Rank))
      Out.push_back(S);
  return Out;
}

} // namespace collc::rt

#endif
