//===- ir/RankExprFold.h - A rank expression folded bottom-up -*- C++ -*-===//
//
// The one walk over a rank expression that computes a value per node from
// its children's (copying it into another program, bounding its range over
// all ranks): children before parents, with an explicit stack, so that an
// expression of 100k terms cannot overflow the call stack.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_RANKEXPRFOLD_H
#define COLLC_IR_RANKEXPRFOLD_H

#include "ir/RankExpr.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <initializer_list>
#include <optional>

namespace collc {

/// Folds \p Root bottom-up: \p Fold(E) computes E's value from its
/// children's, which are in \p Done by then, or returns nullopt to stop the
/// fold (the result is then nullopt). A subexpression shared by several
/// parents, or folded into \p Done by an earlier call, is folded once.
/// \p Done is keyed by pointer for lookup only, never iterated: no order
/// comes from it.
template <typename T, typename FoldFn>
std::optional<T> foldBottomUp(const RankExpr &Root, llvm::DenseMap<const RankExpr *, T> &Done,
                              FoldFn Fold) {
  llvm::SmallVector<const RankExpr *, 16> Stack{&Root};
  while (!Stack.empty()) {
    const RankExpr *E = Stack.back();
    if (Done.count(E)) {
      Stack.pop_back();
      continue;
    }
    // Children first: push the missing ones and come back to E later.
    bool Ready = true;
    for (const RankExpr *Child : {E->lhs(), E->rhs()})
      if (Child && !Done.count(Child)) {
        Stack.push_back(Child);
        Ready = false;
      }
    if (!Ready)
      continue;
    Stack.pop_back();
    std::optional<T> Value = Fold(*E);
    if (!Value)
      return std::nullopt;
    Done[E] = std::move(*Value);
  }
  return Done.lookup(&Root);
}

} // namespace collc

#endif
