//===- passes/analysis/BucketBoundaries.cpp - Per-boundary bucket choice ---===//

#include "passes/analysis/BucketBoundaries.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <limits>
#include <queue>
#include <utility>

using namespace llvm;

namespace collc {

namespace {

/// A set of indices 0..n-1 that only grows, answering "the largest member
/// below h" in a few word operations: a bit per index, and above it a bit
/// per non-empty word, level by level up to one word (at most five levels
/// for 2^30 indices). What auto asks n times per piece: a balanced tree
/// (std::set) made the choice ten times slower.
class GrowingIndexSet {
public:
  explicit GrowingIndexSet(size_t N) {
    do {
      N = (N + 63) / 64;
      Levels.emplace_back(N, 0);
    } while (N > 1);
  }
  void insert(size_t I) {
    for (std::vector<uint64_t> &L : Levels) {
      bool WasEmpty = L[I / 64] == 0;
      L[I / 64] |= uint64_t(1) << (I % 64);
      if (!WasEmpty)
        return;
      I /= 64;
    }
  }
  /// The largest member < \p H, or -1.
  int64_t largestBelow(size_t H) const {
    if (H == 0)
      return -1;
    // Up: the lowest level whose word at or below H-1 holds a member.
    size_t X = H - 1, Level = 0;
    for (;; ++Level) {
      if (Level == Levels.size())
        return -1;
      if (uint64_t M = Levels[Level][X / 64] & (~uint64_t(0) >> (63 - X % 64))) {
        X = X / 64 * 64 + (63 - countLeadingZeros(M));
        break;
      }
      if (X < 64)
        return -1;
      X = X / 64 - 1; // the words before this one
    }
    // Down: the highest member under each level's highest set bit.
    while (Level-- > 0)
      X = X * 64 + (63 - countLeadingZeros(Levels[Level][X]));
    return int64_t(X);
  }

private:
  std::vector<std::vector<uint64_t>> Levels;
};

} // namespace

std::vector<BucketChoice> chooseBucketBoundaries(ArrayRef<double> Ready, ArrayRef<double> Size,
                                                 ArrayRef<TimePiece> Cost) {
  assert(Ready.size() == Size.size() && "one ready time and one size per tensor");
  assert(!Cost.empty() && "a cost of at least one piece");
  size_t N = Ready.size(), K = Cost.size();
  constexpr double Inf = std::numeric_limits<double>::infinity();
  std::vector<double> R(N), S(N + 1, 0.0), F(N + 1, 0.0);
  std::vector<size_t> From(N + 1, 0);
  for (size_t I = 0; I != N; ++I) {
    R[I] = std::max(Ready[I], I ? R[I - 1] : 0.0);
    S[I + 1] = S[I] + Size[I];
  }
  // Piece k prices bucket sizes in [Low(k), High(k)): the first and the last
  // reach to either end, as LinkClass::at does.
  auto Low = [&](size_t P) { return P ? Cost[P].FromBytes : -Inf; };
  auto High = [&](size_t P) { return P + 1 < K ? Cost[P + 1].FromBytes : Inf; };
  // For the b at hand, the a in [Lo[k], Hi[k]) make a bucket of piece k.
  std::vector<size_t> Lo(K, 0), Hi(K, 0);
  // (key, a); the heap's top is the least key, and of equal keys the latest a.
  using Entry = std::pair<double, size_t>;
  auto Above = [](const Entry &X, const Entry &Y) {
    return X.first > Y.first || (X.first == Y.first && X.second < Y.second);
  };
  using Heap = std::priority_queue<Entry, std::vector<Entry>, decltype(Above)>;
  std::vector<Heap> Queued(K, Heap(Above)); // key F(a) - beta_k S(a), a not free
  Heap Busy(Above);                         // key F(a): a not yet free
  std::vector<char> Free(N + 1, 0);         // F(a) <= R(b-1) for this b and later
  GrowingIndexSet FreeSet(N + 1);
  for (size_t B = 1; B <= N; ++B) {
    double RB = R[B - 1];
    Busy.push({F[B - 1], B - 1});
    while (!Busy.empty() && Busy.top().first <= RB) {
      Free[Busy.top().second] = 1;
      FreeSet.insert(Busy.top().second);
      Busy.pop();
    }
    double Best = Inf;
    size_t BestA = 0;
    bool BestFree = false;
    auto Consider = [&](double Finish, size_t A, bool IsFree) {
      bool Wins = Finish < Best ||
                  (Finish == Best && (IsFree != BestFree ? IsFree : A > BestA));
      if (Wins) {
        Best = Finish;
        BestA = A;
        BestFree = IsFree;
      }
    };
    for (size_t P = 0; P != K; ++P) {
      const TimePiece &C = Cost[P];
      while (Hi[P] < B && S[B] - S[Hi[P]] >= Low(P)) {
        size_t A = Hi[P]++;
        if (!Free[A])
          Queued[P].push({F[A] - C.UsPerByte * S[A], A});
      }
      while (Lo[P] < B && S[B] - S[Lo[P]] >= High(P))
        ++Lo[P];
      if (Lo[P] >= Hi[P])
        continue;
      // Issued when its last tensor is ready: the latest free a.
      if (int64_t A = FreeSet.largestBelow(Hi[P]); A >= int64_t(Lo[P]))
        Consider(RB + C.AlphaUs + C.UsPerByte * (S[B] - S[A]), size_t(A), true);
      // Issued when the bucket before it finishes.
      Heap &Q = Queued[P];
      while (!Q.empty() && (Q.top().second < Lo[P] || Free[Q.top().second]))
        Q.pop();
      if (!Q.empty()) {
        size_t A = Q.top().second;
        Consider(F[A] + C.AlphaUs + C.UsPerByte * (S[B] - S[A]), A, false);
      }
    }
    F[B] = Best;
    From[B] = BestA;
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
