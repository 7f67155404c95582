//===- tools/collc/bench/Calibrate.h - collc bench --calibrate --*- C++ -*-===//
//
// Fits a link file to the machine it runs on: every kind of
// calibratedKinds() (ReplayPlans.h) is compiled as a one-op plan at each
// size of a sweep (doubling up to --max-bytes) and replayed on the local
// backend by the bench's replay (LocalBench.h), so the figures include what
// a real replay pays (executor, comm stream, waits). The times are fitted
// per kind and size range (LinkFitting.h) and printed beside the fit.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_CALIBRATE_H
#define COLLC_TOOLS_COLLC_BENCH_CALIBRATE_H

#include "passes/analysis/CostModel.h"

#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

struct CalibrateOptions {
  int64_t World = 2;
  uint64_t MaxBytes = 64ull << 20;
  double BudgetSec = 0.05; ///< per size and kind
  std::string Name = "calibrated";
};

struct CalibratedLink {
  LinkFit Fit;
  AlphaBeta Overall; ///< all_reduce over every size: for kinds not measured
};

/// Measures and fits on the local backend; prints each measurement beside
/// its fitted time, and the ranges, to \p Out.
llvm::Expected<CalibratedLink> calibrateLocal(const CalibrateOptions &O, llvm::raw_ostream &Out);

} // namespace collc::tool

#endif
