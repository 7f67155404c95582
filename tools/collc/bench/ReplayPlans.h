//===- tools/collc/bench/ReplayPlans.h - The plans collc bench replays -*- C++ -*-===//
//
// The plans every `collc bench` backend replays, compiled one way for all
// of them: one all_reduce of a given size (to set beside the raw engine),
// and N all_reduces of 4 KiB fused by the compiler into one bucket against
// the same N issued one by one (no bucketing); and, for calibration, ops of
// each kind `collc bench --calibrate` measures.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_REPLAYPLANS_H
#define COLLC_TOOLS_COLLC_BENCH_REPLAYPLANS_H

#include "plan/Plan.h"

#include "ir/OpKind.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace collc::tool {

/// The kinds calibration measures: all_reduce, all_gather, reduce_scatter,
/// broadcast, all_to_all and send (a send/recv pair between ranks 0 and 1).
llvm::ArrayRef<OpKind> calibratedKinds();

/// What every size of sameOpsProgram must be a multiple of for \p K over
/// \p World ranks (f32 elements, shards and bucket parts divide evenly).
uint64_t sameOpsGranule(OpKind K, int64_t World);

/// A program of \p Copies independent \p K (a calibratedKinds() member; four
/// tensors each for a bucketable kind), each of \p Bytes reported bytes
/// (CostModel.h; a multiple of sameOpsGranule) over \p World ranks, all used
/// by one compute at the end.
std::string sameOpsProgram(OpKind K, uint64_t Bytes, int64_t World, unsigned Copies);

/// sameOpsProgram compiled so that each copy is one comm, launched back to
/// back on the comm stream and waited for at the end, as a plan's buckets
/// are: all_reduce, all_gather and reduce_scatter copies are each a bucket
/// of four tensors in its own buffer (the fixed policy at \p Bytes); the
/// other kinds are neither bucketed nor fused.
llvm::Expected<plan::Plan> sameOpsPlan(OpKind K, uint64_t Bytes, int64_t World, unsigned Copies);

/// One f32 sum all_reduce of \p Bytes (a multiple of 4) over \p World ranks,
/// out of place, with the default pipeline.
llvm::Expected<plan::Plan> oneAllReducePlan(uint64_t Bytes, int64_t World);

struct FusedComparison {
  plan::Plan Fused;    ///< all in one bucket
  plan::Plan OneByOne; ///< one collective per tensor, each waited for
};

/// The most all_reduces the fused comparison fuses into one (the fuse pass's
/// max-count there; `collc bench --replay-ops` takes up to it).
constexpr unsigned MaxReplayOps = 100000;

/// \p Ops all_reduces of 4 KiB over \p World ranks, compiled both ways.
llvm::Expected<FusedComparison> fusedComparisonPlans(unsigned Ops, int64_t World);

} // namespace collc::tool

#endif
