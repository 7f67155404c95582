//===- runtime/verify/ReductionBound.h - Reductions in any order -*- C++ -*-===//
//
// When a reduced element is acceptable. Backends that combine the sources in
// rank order (local, nccl as collc drives it) must match the reference
// (PlanChecker.h: referenceReduce) bit for bit. Backends that do not (mpi,
// gloo: trees, rings, their own accumulators) may differ from it in the last
// bits of a float sum or product; for them a result is acceptable within the
// standard floating-point summation bound. Integers, min and max are exact in
// any order. This is the one place that decides; the plan checker and the
// conformance suite both ask it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_VERIFY_REDUCTIONBOUND_H
#define COLLC_RUNTIME_VERIFY_REDUCTIONBOUND_H

#include "ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"

#include <cstdint>
#include <string>

namespace collc::rt {

/// What a backend promises about its reductions.
struct ReductionOrder {
  /// Sources are combined in rank order, as the reference does.
  bool RankOrdered = true;
  /// f16, bf16 and fp8 accumulate in f32 (as the reference); false: in
  /// their own type, rounding every partial result (e.g. Gloo's float16).
  bool NarrowInF32 = true;
};

/// One reduction: element I of the result reduces element First + I of
/// each of the N sources.
struct ReductionSources {
  ElemType T;
  ReduceOp Op;
  double Scale;
  const char *const *Srcs;
  unsigned N;
  uint64_t First = 0;
};

/// The verdict on one element.
struct ReducedElementVerdict {
  bool Acceptable = false;
  /// Whether only bit-exact equality was acceptable; else the bound.
  bool Exact = true;
  /// The largest |got - expected| allowed (when not Exact).
  double Bound = 0;
};

/// Whether \p Got is acceptable for element \p I of \p R under \p Order,
/// where \p Ref is the reference's value (both one element of R.T).
ReducedElementVerdict checkReducedElement(const ReductionSources &R, uint64_t I, const char *Got,
                                          const char *Ref, ReductionOrder Order);

/// The first unacceptable element of \p Got against the reference \p Want
/// (equal sizes, whole elements of R.T), with its verdict; None if all are
/// acceptable.
struct UnacceptableElement {
  uint64_t Index;
  ReducedElementVerdict Verdict;
};
llvm::Optional<UnacceptableElement> firstUnacceptable(const ReductionSources &R,
                                                      llvm::ArrayRef<char> Got,
                                                      llvm::ArrayRef<char> Want,
                                                      ReductionOrder Order);

/// "bit-exact" or "|got - expected| <= 3.2e-06", for error messages.
std::string describeBound(const ReducedElementVerdict &V);

} // namespace collc::rt

#endif
