//===- tools/collc/RankReport.h - What the ranks of a process run report -*- C++ -*-===//
//
// The end of every process run of `collc run`, whatever the backend (host
// executors, or nccl on a GPU): each rank checks its own results against
// the reference, then the ranks' figures travel in one all-gather over the
// run's world, and rank 0 prints each step's time on every rank and whether
// every rank verified.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_RANKREPORT_H
#define COLLC_TOOLS_COLLC_RANKREPORT_H

#include "plan/Plan.h"
#include "runtime/verify/PlanChecker.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

namespace collc::tool {

/// This process's rank \p Me of \p P against the reference, reductions
/// compared as \p Backend may order them.
llvm::Expected<rt::CheckSummary> checkThisRank(const plan::Plan &P, llvm::StringRef Backend,
                                               int64_t Me, rt::ActualTensor Actual);

/// What one rank ran and measured.
struct RankFigures {
  int64_t Rank = 0, World = 1;
  unsigned Steps = 0;
  std::vector<double> StepUs; ///< per step
  uint64_t BytesMoved = 0;    ///< by this rank per step
  /// The check of its results (its error already printed when it failed).
  bool Verified = false;
  rt::CheckSummary Checked;
};

using GatherWords =
    llvm::function_ref<llvm::Expected<std::vector<uint32_t>>(llvm::ArrayRef<uint32_t>)>;

/// Gathers every rank's figures with \p Gather and prints them on rank 0;
/// returns the exit code (non-zero on every rank when any rank's results
/// differ). \p Backend names the run in messages.
int reportAcrossRanks(const RankFigures &Mine, llvm::StringRef Backend, GatherWords Gather,
                      llvm::raw_ostream &Out, llvm::raw_ostream &Err);

} // namespace collc::tool

#endif
