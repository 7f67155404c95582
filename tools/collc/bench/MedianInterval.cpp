//===- tools/collc/bench/MedianInterval.cpp - A median and how sure it is -===//

#include "tools/collc/bench/MedianInterval.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

namespace collc::tool {

size_t medianBoundRank(size_t N, double Confidence) {
  assert(Confidence > 0 && Confidence < 1 && "a confidence is in (0, 1)");
  double Tail = (1 - Confidence) / 2; // allowed on each side
  double LogAll = std::lgamma(double(N) + 1) - double(N) * std::log(2.0);
  // Cdf = P(B <= K); the bound l = K + 1 stays valid while P(B < l) <= Tail.
  double Cdf = 0;
  size_t L = 0;
  for (size_t K = 0; 2 * (K + 1) <= N + 1; ++K) {
    Cdf += std::exp(LogAll - std::lgamma(double(K) + 1) - std::lgamma(double(N - K) + 1));
    if (Cdf > Tail)
      break;
    L = K + 1;
  }
  return L;
}

/// The value at fraction \p Q of the sorted \p S (linear between ranks).
static double quantile(const std::vector<double> &S, double Q) {
  double At = Q * double(S.size() - 1);
  size_t Below = size_t(At);
  if (Below + 1 >= S.size())
    return S.back();
  double Frac = At - double(Below);
  return S[Below] + Frac * (S[Below + 1] - S[Below]);
}

MedianInterval medianInterval(llvm::ArrayRef<double> Samples, double Confidence) {
  assert(!Samples.empty() && "a median of nothing");
  std::vector<double> S(Samples.begin(), Samples.end());
  std::sort(S.begin(), S.end());
  MedianInterval R;
  R.N = S.size();
  R.Median = quantile(S, 0.5);
  R.P25 = quantile(S, 0.25);
  R.P75 = quantile(S, 0.75);
  size_t L = medianBoundRank(R.N, Confidence);
  R.Covers = L > 0;
  R.Lo = L ? S[L - 1] : S.front();
  R.Hi = L ? S[R.N - L] : S.back();
  return R;
}

} // namespace collc::tool
