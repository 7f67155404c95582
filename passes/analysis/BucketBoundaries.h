//===- passes/analysis/BucketBoundaries.h - Per-boundary bucket choice -*- C++ -*-===//
//
// The model bucket{policy=auto} optimises: tensors 0..n-1 in gradient-ready
// order, tensor i ready at Ready[i] and costing Cost[i] us of bandwidth in a
// collective; a bucket [a, b) is one collective of cost Alpha + sum Cost,
// issued when its last tensor is ready and the one comm stream is free
// (buckets launch in order, as DDP's reducer does). The choice minimises
// the time the last bucket finishes.
//
// Dynamic programming: F(b), the earliest finish of tensors [0, b), is
//   F(b) = min over a < b of max(R(b-1), F(a)) + Alpha + C(b) - C(a)
// (R the running max of Ready, C the prefix sums of Cost). A smaller finish
// is never worse for what follows, so F(a) is the whole state. F does not
// decrease (drop tensor b from its bucket: nothing finishes later), so the
// a with F(a) <= R(b-1) form a prefix [0, k) and, R not decreasing, k only
// grows: the best of that prefix is its last a; past it the cost is
// F(a) - C(a) + const, a sliding-window minimum kept in a monotone deque.
// O(n) time and memory.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_BUCKETBOUNDARIES_H
#define COLLC_PASSES_ANALYSIS_BUCKETBOUNDARIES_H

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <vector>

namespace collc {

struct BucketChoice {
  size_t Begin, End; ///< tensors [Begin, End)
  double IssueUs;    ///< when it is issued: its tensors ready, the stream free
  double ReadyUs;    ///< when its last tensor is ready
  double FreeUs;     ///< when the comm stream finished the bucket before
  double FinishUs;
};

/// The buckets, in order, that finish tensors [0, n) earliest (ties keep the
/// later boundary). \p Ready and \p Cost have n entries.
std::vector<BucketChoice> chooseBucketBoundaries(llvm::ArrayRef<double> Ready,
                                                 llvm::ArrayRef<double> Cost, double Alpha);

/// The perfect-overlap lower bound on that finish: every tensor ready at or
/// after Ready[i] is sent after it, in at least one collective.
double bucketFinishLowerBound(llvm::ArrayRef<double> Ready, llvm::ArrayRef<double> Cost,
                              double Alpha);

} // namespace collc

#endif
