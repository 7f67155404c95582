//===- passes/AutoBuckets.h - bucket{policy=auto}'s boundaries -*- C++ -*-===//
//
// auto's choice of buckets: within each run of tensors that may share a
// bucket (the longest the early closes of BucketAssign.h allow), the split
// whose communication finishes first (analysis/BucketBoundaries.h), given
// when each tensor is ready with communication free (the step simulator's
// compute timeline) and the cost model on one link class. Each bucket's
// `bucket_why` says why its boundary is where it is, with the times the
// choice saw.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_AUTOBUCKETS_H
#define COLLC_PASSES_AUTOBUCKETS_H

#include "passes/GroupByKey.h"
#include "passes/analysis/CostModel.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace collc {

/// The buckets auto chooses for \p P on \p Link, in the order of their
/// first tensor, each with why it ends where it does.
llvm::Expected<std::vector<ClosedGroup>> chooseAutoBuckets(const Program &P,
                                                           const LinkClass &Link);

} // namespace collc

#endif
