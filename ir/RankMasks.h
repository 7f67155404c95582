//===- ir/RankMasks.h - Which ranks run each op ------------------*- C++ -*-===//
//
// For every op, the set of ranks it runs on (its `when` holds and the rank is
// in its group). Most ops run everywhere; those share one "every rank" entry
// so a million-op data-parallel program costs one bit per op.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_RANKMASKS_H
#define COLLC_IR_RANKMASKS_H

#include "ir/Program.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace collc {

class RankMasks {
public:
  /// Evaluates every op on every rank. A predicate that cannot be evaluated
  /// on a rank counts as false there; \p OnError (if given) hears about the
  /// first failing rank of each op.
  using ErrorHandler = llvm::function_ref<void(OpId, int64_t Rank, const RankExprError &)>;
  RankMasks(const Program &P, ErrorHandler OnError = nullptr);

  bool runsOn(OpId Op, int64_t Rank) const {
    int32_t I = Index[Op];
    return I < 0 || Masks[I].test(Rank);
  }
  /// Null when the op runs on every rank.
  const llvm::BitVector *mask(OpId Op) const { return Index[Op] < 0 ? nullptr : &Masks[Index[Op]]; }
  bool runsEverywhere(OpId Op) const { return Index[Op] < 0; }

private:
  std::vector<int32_t> Index; // -1: every rank
  std::vector<llvm::BitVector> Masks;
};

} // namespace collc

#endif // COLLC_IR_RANKMASKS_H
