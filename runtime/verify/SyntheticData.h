//===- runtime/verify/SyntheticData.h - Deterministic tensor contents -*- C++ -*-===//
//
// What `collc run` and the tests write into each tensor a compute op
// produces: a function of (rank, tensor, element), small enough that sums and
// products over many ranks stay exact in every element type, and valid split
// sizes for the counts of runtime all_to_all_v.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_VERIFY_SYNTHETICDATA_H
#define COLLC_RUNTIME_VERIFY_SYNTHETICDATA_H

#include "plan/Plan.h"

#include "llvm/ADT/ArrayRef.h"

namespace collc::rt {

/// Fills \p Out with rank \p Rank's contents of tensor \p Tensor of \p P.
void fillSynthetic(const plan::Plan &P, uint32_t Tensor, int64_t Rank,
                   llvm::MutableArrayRef<char> Out);

/// The value of element \p I of type \p T on rank \p Rank for tensor number
/// \p Tensor, as the element type stores it, written to \p Out.
void syntheticElement(ElemType T, int64_t Rank, uint32_t Tensor, uint64_t I, char *Out);

} // namespace collc::rt

#endif
