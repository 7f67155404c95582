//===- passes/analysis/BucketBoundaries.h - Per-boundary bucket choice -*- C++ -*-===//
//
// The model bucket{policy=auto} optimises: tensors 0..n-1 in gradient-ready
// order, tensor i ready at Ready[i] with Size[i] bytes (as the cost model
// counts them); a bucket [a, b) is one collective of Size[a] + ... +
// Size[b-1] bytes, costing what the cost model gives for that size, issued
// when its last tensor is ready and the one comm stream is free (buckets
// launch in order, as DDP's reducer does). The choice minimises the time
// the last bucket finishes.
//
// The cost of s bytes is piecewise linear (CostModel.h's TimePiece): one
// alpha + s * beta for a built-in link class, one per size range of a
// calibrated link file. A bucket is priced at its own size's piece, never
// as the sum of its tensors' prices at theirs (which, where small messages
// are slow per byte, makes large buckets look as slow as small ones).
//
// Dynamic programming: F(b), the earliest finish of tensors [0, b), is
//   F(b) = min over a < b of max(R(b-1), F(a)) + T(S(b) - S(a))
// (R the running max of Ready, S the prefix sums of Size, T the cost). A
// smaller finish is never worse for what follows, so F(a) is the whole
// state. For each b and each piece k, the a whose bucket falls in piece k
// form a window that only moves right as b grows. Among them:
//  - an a with F(a) <= R(b-1) (the stream is free when the last tensor is
//    ready; once so, for every later b) issues at R(b-1): the latest such a
//    costs least (an ordered set of these a);
//  - the others issue at F(a): the least F(a) - beta_k S(a) wins (a heap per
//    piece, entries dropped lazily once they leave the window or become
//    free).
// O(n k log n) time, O(n k) memory, for n tensors and k pieces. Ties go to
// a bucket issued when its tensors are ready, then to the later boundary.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_BUCKETBOUNDARIES_H
#define COLLC_PASSES_ANALYSIS_BUCKETBOUNDARIES_H

#include "passes/analysis/CostModel.h"

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

/// The buckets, in order, that finish tensors [0, n) earliest. \p Ready and
/// \p Size have n entries; \p Cost is a bucket's time by its size
/// (collectiveTimePieces), at least one piece, the first from 0.
std::vector<BucketChoice> chooseBucketBoundaries(llvm::ArrayRef<double> Ready,
                                                 llvm::ArrayRef<double> Size,
                                                 llvm::ArrayRef<TimePiece> Cost);

/// The perfect-overlap lower bound on that finish for one linear cost
/// (\p Alpha + the sum of \p Cost): every tensor ready at or after Ready[i]
/// is sent after it, in at least one collective.
double bucketFinishLowerBound(llvm::ArrayRef<double> Ready, llvm::ArrayRef<double> Cost,
                              double Alpha);

} // namespace collc

#endif
