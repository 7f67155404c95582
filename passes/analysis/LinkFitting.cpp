//===- passes/analysis/LinkFitting.cpp - Alpha-beta fits by size range ------===//

#include "passes/analysis/LinkFitting.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace llvm;

namespace collc {

/// A bandwidth no measurement can tell from infinite: what a range whose
/// time does not grow with size gets.
static constexpr double FlatGBps = 1e6;

double relativeError(double PredictedUs, double MeasuredUs) {
  return MeasuredUs > 0 ? std::fabs(PredictedUs - MeasuredUs) / MeasuredUs : 0.0;
}

/// Microseconds per bus byte of \p C.
static double slope(AlphaBeta C) { return 1.0 / (C.BusGBps * 1e3); }

AlphaBeta fitAlphaBeta(OpKind K, int64_t World, ArrayRef<LinkSample> Samples) {
  double Factor = std::max(busBandwidthFactor(K, World), 1e-9);
  // Normal equations of sum w (a + s x - t)^2 with w = 1/t^2.
  double Sw = 0, Sx = 0, Sxx = 0, St = 0, Sxt = 0;
  for (const LinkSample &P : Samples) {
    double W = 1.0 / (P.TimeUs * P.TimeUs), X = double(P.Bytes) * Factor;
    Sw += W;
    Sx += W * X;
    Sxx += W * X * X;
    St += W * P.TimeUs;
    Sxt += W * X * P.TimeUs;
  }
  double Det = Sw * Sxx - Sx * Sx;
  double A = 0, S = 0;
  if (Det > 1e-12 * Sw * Sxx) {
    A = (St * Sxx - Sx * Sxt) / Det;
    S = (Sw * Sxt - Sx * St) / Det;
  }
  // Keep alpha >= 0 and the slope > 0: refit the one parameter left free.
  if (A < 0 || Det <= 1e-12 * Sw * Sxx) {
    A = 0;
    S = Sxx > 0 ? Sxt / Sxx : 0;
  }
  if (S <= 0) {
    S = 0;
    A = St / Sw;
  }
  double Bw = S > 0 ? std::min(1.0 / (S * 1e3), FlatGBps) : FlatGBps;
  return {A, Bw};
}

/// Summed squared relative error of \p C on \p Samples.
static double squaredError(OpKind K, int64_t World, AlphaBeta C, ArrayRef<LinkSample> Samples) {
  double Factor = busBandwidthFactor(K, World), E = 0;
  for (const LinkSample &P : Samples) {
    double R = relativeError(C.AlphaUs + double(P.Bytes) * Factor * slope(C), P.TimeUs);
    E += R * R;
  }
  return E;
}

static double medianError(OpKind K, int64_t World, AlphaBeta C, ArrayRef<LinkSample> Samples) {
  double Factor = busBandwidthFactor(K, World);
  std::vector<double> Es;
  for (const LinkSample &P : Samples)
    Es.push_back(relativeError(C.AlphaUs + double(P.Bytes) * Factor * slope(C), P.TimeUs));
  std::sort(Es.begin(), Es.end());
  return Es.empty() ? 0 : Es[Es.size() / 2];
}

std::vector<LinkRange> fitLinkRanges(OpKind K, int64_t World, ArrayRef<LinkSample> Samples) {
  size_t N = Samples.size();
  // Best[J][R]: least error of the first J samples in R ranges; From: where
  // the last of them starts. Ties keep the earlier split, so the result
  // depends on the samples alone. N is a sweep's sizes (tens), so the cubic
  // walk over (start, end) pairs is cheap.
  const double Inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> Best(N + 1, std::vector<double>(MaxRanges + 1, Inf));
  std::vector<std::vector<size_t>> From(N + 1, std::vector<size_t>(MaxRanges + 1, 0));
  Best[0][0] = 0;
  for (size_t J = 1; J <= N; ++J)
    for (size_t R = 1; R <= MaxRanges; ++R)
      for (size_t I = 0; I < J; ++I) {
        // One range may be short only when it is the only one.
        if (J - I < MinPointsPerRange && !(I == 0 && J == N))
          continue;
        if (Best[I][R - 1] == Inf)
          continue;
        ArrayRef<LinkSample> Seg = Samples.slice(I, J - I);
        double E = Best[I][R - 1] + squaredError(K, World, fitAlphaBeta(K, World, Seg), Seg);
        if (E < Best[J][R]) {
          Best[J][R] = E;
          From[J][R] = I;
        }
      }
  size_t Ranges = 1;
  for (size_t R = 2; R <= MaxRanges; ++R)
    if (Best[N][R] + RangePenalty * double(R) < Best[N][Ranges] + RangePenalty * double(Ranges))
      Ranges = R;
  std::vector<size_t> Starts;
  for (size_t J = N, R = Ranges; R != 0; --R) {
    Starts.push_back(From[J][R]);
    J = From[J][R];
  }
  std::reverse(Starts.begin(), Starts.end());
  std::vector<LinkRange> Out;
  for (size_t R = 0; R != Starts.size(); ++R) {
    size_t I = Starts[R], J = R + 1 == Starts.size() ? N : Starts[R + 1];
    ArrayRef<LinkSample> Seg = Samples.slice(I, J - I);
    LinkRange L;
    // Contiguous: each range runs from its first size to the next range's.
    L.MinBytes = R == 0 ? 0 : Samples[I].Bytes;
    L.MaxBytes = J == N ? Samples[N - 1].Bytes + 1 : Samples[J].Bytes;
    L.Fit = fitAlphaBeta(K, World, Seg);
    L.Points = unsigned(Seg.size());
    L.MedianRelError = medianError(K, World, L.Fit, Seg);
    Out.push_back(L);
  }
  return Out;
}

} // namespace collc
