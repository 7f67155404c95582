//===- passes/analysis/BucketBoundaries.cpp - Per-boundary bucket choice ---===//

#include "passes/analysis/BucketBoundaries.h"

#include <algorithm>
#include <cassert>
#include <deque>

using namespace llvm;

namespace collc {

std::vector<BucketChoice> chooseBucketBoundaries(ArrayRef<double> Ready, ArrayRef<double> Cost,
                                                 double Alpha) {
  assert(Ready.size() == Cost.size() && "one ready time and one cost per tensor");
  size_t N = Ready.size();
  std::vector<double> R(N), C(N + 1, 0.0), F(N + 1, 0.0);
  std::vector<size_t> From(N + 1, 0);
  for (size_t I = 0; I != N; ++I) {
    R[I] = std::max(Ready[I], I ? R[I - 1] : 0.0);
    C[I + 1] = C[I] + Cost[I];
  }
  auto Key = [&](size_t A) { return F[A] - C[A]; };
  std::deque<size_t> Window; // a in [K, B), Key increasing front to back
  size_t K = 0;              // the a < B with F(a) <= R(B-1) are [0, K)
  for (size_t B = 1; B <= N; ++B) {
    // a = B-1 enters; later a win ties (smaller last bucket, same finish).
    while (!Window.empty() && Key(Window.back()) >= Key(B - 1))
      Window.pop_back();
    Window.push_back(B - 1);
    while (K < B && F[K] <= R[B - 1])
      ++K;
    while (!Window.empty() && Window.front() < K)
      Window.pop_front();
    // F(0) = 0 <= R, so K >= 1: a = K-1 issues when its last tensor is ready.
    size_t Best = K - 1;
    F[B] = R[B - 1] + Alpha + C[B] - C[Best];
    if (!Window.empty()) {
      size_t A = Window.front();
      double Queued = F[A] + Alpha + C[B] - C[A];
      if (Queued < F[B]) {
        F[B] = Queued;
        Best = A;
      }
    }
    From[B] = Best;
  }
  std::vector<BucketChoice> Out;
  for (size_t B = N; B != 0; B = From[B]) {
    size_t A = From[B];
    Out.push_back({A, B, std::max(R[B - 1], F[A]), R[B - 1], F[A], F[B]});
  }
  std::reverse(Out.begin(), Out.end());
  return Out;
}

double bucketFinishLowerBound(ArrayRef<double> Ready, ArrayRef<double> Cost, double Alpha) {
  double Bound = 0, Rest = 0;
  for (size_t I = Ready.size(); I-- > 0;) {
    Rest += Cost[I];
    Bound = std::max(Bound, Ready[I] + Alpha + Rest);
  }
  return Bound;
}

} // namespace collc
