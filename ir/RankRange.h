//===- ir/RankRange.h - What an expression can do over all ranks -*- C++ -*-===//
//
// Interval arithmetic over a rank expression with rank in 0..world-1: the
// range of values it can take, or none when some operator might fail
// (division by zero, overflow) on some rank. A definition that cannot fail
// needs no evaluation on every rank to be checked, so a group that no op
// uses costs time proportional to its text, not to the world.
//
// Conservative: none means "might fail", and then the caller evaluates on
// every rank to find out (and to name the rank).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_RANKRANGE_H
#define COLLC_IR_RANKRANGE_H

#include "ir/RankExpr.h"

#include <cstdint>
#include <optional>

namespace collc {

struct RankRange {
  int64_t Lo, Hi; ///< inclusive
};

/// The values \p E takes on ranks 0..WorldSize-1, when no operator in it can
/// fail on any of them.
std::optional<RankRange> rangeOverRanks(const RankExpr &E, int64_t WorldSize);

} // namespace collc

#endif // COLLC_IR_RANKRANGE_H
