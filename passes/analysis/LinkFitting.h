//===- passes/analysis/LinkFitting.h - Alpha-beta fits by size range -*- C++ -*-===//
//
// Fits what a link file holds (LinkFile.h) to measurements of one op kind:
// size ranges, each with the latency and bus bandwidth of t = alpha +
// bus bytes / bandwidth (CostModel.h's one formula).
//
// Each range is a weighted least-squares fit minimising squared *relative*
// error (weights 1/t^2), since times span four decades and a prediction is
// judged by its ratio. Ranges are chosen by segmented least squares (dynamic
// programming over the sizes in ascending order): each range holds at least
// four measurements, and a new range is opened only where it lowers the
// summed squared relative error by more than RangePenalty, so a backend with
// one regime gets one range and one with a protocol switch (eager to
// rendezvous, one algorithm to another) gets one per regime.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_LINKFITTING_H
#define COLLC_PASSES_ANALYSIS_LINKFITTING_H

#include "passes/analysis/CostModel.h"

namespace collc {

/// One measurement: \p Bytes reported bytes (CostModel.h) took \p TimeUs.
struct LinkSample {
  uint64_t Bytes;
  double TimeUs;
};

/// What a new range must save in summed squared relative error.
constexpr double RangePenalty = 0.1;
constexpr size_t MinPointsPerRange = 4;
constexpr size_t MaxRanges = 4;

/// The fit over all of \p Samples (sorted by Bytes, TimeUs > 0) of \p K over
/// \p World ranks; alpha >= 0 and bandwidth > 0.
AlphaBeta fitAlphaBeta(OpKind K, int64_t World, llvm::ArrayRef<LinkSample> Samples);

/// Ranges covering [0, largest sample] fitted to \p Samples (sorted by Bytes,
/// at least one, TimeUs > 0); fewer than 2 * MinPointsPerRange give one range.
std::vector<LinkRange> fitLinkRanges(OpKind K, int64_t World, llvm::ArrayRef<LinkSample> Samples);

/// |predicted - measured| / measured.
double relativeError(double PredictedUs, double MeasuredUs);

} // namespace collc

#endif
