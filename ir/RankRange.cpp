//===- ir/RankRange.cpp - What an expression can do over all ranks --------===//

#include "ir/RankRange.h"

#include "ir/RankExprFold.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace llvm;

namespace collc {

namespace {

using Range = RankRange;

/// min/max of \p F over the four corners, or none when one overflows.
template <typename Fn> std::optional<Range> corners(Range A, Range B, Fn F) {
  Range Out{INT64_MAX, INT64_MIN};
  for (int64_t X : {A.Lo, A.Hi})
    for (int64_t Y : {B.Lo, B.Hi}) {
      std::optional<int64_t> V = F(X, Y);
      if (!V)
        return std::nullopt;
      Out.Lo = std::min(Out.Lo, *V);
      Out.Hi = std::max(Out.Hi, *V);
    }
  return Out;
}

std::optional<int64_t> checkedAdd(int64_t X, int64_t Y) {
  int64_t Out;
  return __builtin_add_overflow(X, Y, &Out) ? std::nullopt : std::optional<int64_t>(Out);
}

std::optional<int64_t> checkedSub(int64_t X, int64_t Y) {
  int64_t Out;
  return __builtin_sub_overflow(X, Y, &Out) ? std::nullopt : std::optional<int64_t>(Out);
}

std::optional<int64_t> checkedMul(int64_t X, int64_t Y) {
  int64_t Out;
  return __builtin_mul_overflow(X, Y, &Out) ? std::nullopt : std::optional<int64_t>(Out);
}

/// Floor division, as RankExpr::evaluate does it (Y != 0, no overflow).
std::optional<int64_t> floorDiv(int64_t X, int64_t Y) {
  int64_t Q = X / Y;
  if (X % Y != 0 && ((X < 0) != (Y < 0)))
    --Q;
  return Q;
}

std::optional<Range> apply(RankExpr::Kind K, Range A, Range B) {
  switch (K) {
  case RankExpr::Neg:
    if (A.Lo == INT64_MIN)
      return std::nullopt;
    return Range{-A.Hi, -A.Lo};
  case RankExpr::Add:
    return corners(A, B, checkedAdd);
  case RankExpr::Sub:
    return corners(A, B, checkedSub);
  case RankExpr::Mul:
    return corners(A, B, checkedMul);
  case RankExpr::Div:
  case RankExpr::Mod:
    // Zero in the divisor's range, or INT64_MIN / -1: might fail.
    if (B.Lo <= 0 && B.Hi >= 0)
      return std::nullopt;
    if (A.Lo == INT64_MIN && B.Lo <= -1 && B.Hi >= -1)
      return std::nullopt;
    if (K == RankExpr::Div) // monotonic in each operand on this box
      return corners(A, B, floorDiv);
    // Floor remainder takes the divisor's sign.
    return B.Lo > 0 ? Range{0, B.Hi - 1} : Range{B.Lo + 1, 0};
  case RankExpr::Min:
    return Range{std::min(A.Lo, B.Lo), std::min(A.Hi, B.Hi)};
  case RankExpr::Max:
    return Range{std::max(A.Lo, B.Lo), std::max(A.Hi, B.Hi)};
  default: // predicates and logic: 0 or 1
    return Range{0, 1};
  }
}

} // namespace

std::optional<RankRange> rangeOverRanks(const RankExpr &Root, int64_t WorldSize) {
  if (WorldSize < 1)
    return std::nullopt;
  // Bottom-up (foldBottomUp: an expression may have 100k terms); a
  // subexpression shared by several parents is ranged once. The logical
  // operators' right side counts even where evaluation would skip it.
  DenseMap<const RankExpr *, Range> Done;
  return foldBottomUp(Root, Done, [&](const RankExpr &E) -> std::optional<Range> {
    switch (E.kind()) {
    case RankExpr::Const:
      return Range{E.value(), E.value()};
    case RankExpr::Rank:
      return Range{0, WorldSize - 1};
    case RankExpr::World:
      return Range{WorldSize, WorldSize};
    default:
      return apply(E.kind(), Done.lookup(E.lhs()), E.rhs() ? Done.lookup(E.rhs()) : Range{0, 0});
    }
  });
}

} // namespace collc
