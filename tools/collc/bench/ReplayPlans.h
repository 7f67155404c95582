//===- tools/collc/bench/ReplayPlans.h - The plans collc bench replays -*- C++ -*-===//
//
// The plans every `collc bench` backend replays, compiled one way for all
// of them: one all_reduce of a given size (to set beside the raw engine),
// and N all_reduces of 4 KiB fused by the compiler into one bucket against
// the same N issued one by one (no bucketing).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_REPLAYPLANS_H
#define COLLC_TOOLS_COLLC_BENCH_REPLAYPLANS_H

#include "compiler/plan/Plan.h"

#include "llvm/Support/Error.h"

namespace collc::tool {

/// One f32 sum all_reduce of \p Bytes (a multiple of 4) over \p World ranks,
/// out of place, with the default pipeline.
llvm::Expected<plan::Plan> oneAllReducePlan(uint64_t Bytes, int64_t World);

struct FusedComparison {
  plan::Plan Fused;    ///< all in one bucket
  plan::Plan OneByOne; ///< one collective per tensor, each waited for
};

/// \p Ops all_reduces of 4 KiB over \p World ranks, compiled both ways.
llvm::Expected<FusedComparison> fusedComparisonPlans(unsigned Ops, int64_t World);

} // namespace collc::tool

#endif
