//===- tools/collc/bench/MedianInterval.h - A median and how sure it is -*- C++ -*-===//
//
// What `collc bench --backend mpi|gloo` states of a set of timings: their
// median, the interval that holds the true median with a given confidence,
// and the quartiles (the spread). Timings on a shared host have a long tail
// (an iteration descheduled for milliseconds), so nothing here assumes a
// shape: the interval comes from order statistics alone. Of n independent
// samples sorted, the l-th smallest and the (n + 1 - l)-th smallest bound
// the median with probability 1 - 2 P(B < l), B ~ Binomial(n, 1/2); l is the
// largest index that keeps that at or above the confidence asked.
//
// The samples are taken as independent. Consecutive iterations of a bench
// are not quite (a burst of load spans several), so the interval is the
// least uncertainty the samples show, not a guarantee.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_MEDIANINTERVAL_H
#define COLLC_TOOLS_COLLC_BENCH_MEDIANINTERVAL_H

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>

namespace collc::tool {

struct MedianInterval {
  double Median = 0;
  /// Bounds of the confidence interval of the median.
  double Lo = 0, Hi = 0;
  /// The first and third quartiles (linear between order statistics).
  double P25 = 0, P75 = 0;
  size_t N = 0;
  /// Whether n is large enough for the confidence asked (at 95%, n >= 6);
  /// when not, [Lo, Hi] is the whole range of the samples.
  bool Covers = false;
};

/// The median of \p Samples (at least one), its interval at \p Confidence
/// (in (0, 1)), and the quartiles.
MedianInterval medianInterval(llvm::ArrayRef<double> Samples, double Confidence = 0.95);

/// The 1-based rank l of the order statistic that bounds the median from
/// below at \p Confidence among \p N samples (the upper bound is N + 1 - l);
/// 0 when N is too small for that confidence.
size_t medianBoundRank(size_t N, double Confidence);

} // namespace collc::tool

#endif
