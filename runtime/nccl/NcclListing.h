//===- runtime/nccl/NcclListing.h - One rank's CUDA/NCCL calls as text -*- C++ -*-===//
//
// The listing `collc dump PLAN --format nccl --rank R` prints: every call of
// a NcclRankPlan (NcclLowering.h) with its arguments, in issue order, under the
// plan step it comes from, section by section (setup, warm-up, capture,
// every step). CUDA-free, so that the GPU path is golden-tested everywhere
// (tests/lit/compile/nccl*.test).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLLISTING_H
#define COLLC_RUNTIME_NCCL_NCCLLISTING_H

#include "plan/Plan.h"
#include "runtime/nccl/NcclLowering.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::rt::nccl {

/// Prints \p L, the lowering of \p P for one rank, to \p OS.
void printRankPlan(const plan::Plan &P, const NcclRankPlan &L, llvm::raw_ostream &OS);

} // namespace collc::rt::nccl

#endif
