//===- runtime/verify/PlanChecker.h - Expected results of a plan -*- C++ -*-===//
//
// An independent, deliberately plain implementation of a plan's
// communication: element by element, in rank order, from the synthetic
// inputs (SyntheticData.h). It computes what every rank's comm outputs must
// hold after a step and compares them with what the executor produced.
// It shares nothing with the drivers but the narrow-float conversions.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_VERIFY_PLANCHECKER_H
#define COLLC_RUNTIME_VERIFY_PLANCHECKER_H

#include "plan/Plan.h"
#include "runtime/verify/ReductionBound.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace collc::rt {

/// Rank \p R's memory of tensor \p T after the step (empty: not available).
using ActualTensor = llvm::function_ref<llvm::ArrayRef<char>(int64_t R, uint32_t T)>;

struct CheckSummary {
  uint64_t TensorsChecked = 0;
  uint64_t BytesChecked = 0;
};

/// How results are compared. The default asks bit-exact equality, for
/// backends that reduce in rank order.
struct CheckOptions {
  ReductionOrder Reductions;
  /// Compare only this rank's results (a process of a multi-process run
  /// holds only its own); -1: every rank.
  int64_t OnlyRank = -1;
};

/// Checks every comm output on every rank that runs the comm. The error
/// lists the first mismatches (rank, tensor, element, got, expected, and for
/// reductions the bound that was exceeded).
llvm::Expected<CheckSummary> checkPlanResults(const plan::Plan &P, ActualTensor Actual,
                                              const CheckOptions &Opts = {});

/// One element of \p Op over \p N sources, as the reference computes it:
/// accumulate in rank order (f16, bf16 and fp8 in f32), premul_sum scales
/// each input, avg divides at the end. Exposed for the conformance tests.
void referenceReduce(ElemType T, ReduceOp Op, double Scale, const char *const *Srcs, unsigned N,
                     uint64_t Index, char *Out);

} // namespace collc::rt

#endif
