//===- tools/collc/bench/Calibrate.h - collc bench --calibrate --*- C++ -*-===//
//
// Fits a link file to the machine it runs on: every kind of
// calibratedKinds() (ReplayPlans.h) is compiled into a plan of a few such
// comms at each size of a sweep (doubling up to --max-bytes) and replayed on
// the backend by the bench's replay (LocalBench.h on local, ProcessBench.h
// under a launcher), so the figures include what a real replay pays
// (executor, comm stream, waits). The times are fitted per kind and size
// range (LinkFitting.h) and printed beside the fit.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_CALIBRATE_H
#define COLLC_TOOLS_COLLC_BENCH_CALIBRATE_H

#include "passes/analysis/CostModel.h"

#include "plan/Plan.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace collc::tool {

/// Microseconds per step of replaying a plan on the backend measured, given
/// about \p BudgetSec seconds; on a process backend every rank calls it
/// with the same plans and gets the same figure.
using ReplayTimer =
    llvm::function_ref<llvm::Expected<double>(const plan::Plan &P, double BudgetSec)>;

struct CalibrateOptions {
  std::string Backend = "local";
  int64_t World = 2;
  uint64_t MaxBytes = 64ull << 20;
  double BudgetSec = 0.05; ///< per size and kind
  std::string Name = "calibrated";
};

struct CalibratedLink {
  LinkFit Fit;
  AlphaBeta Overall; ///< all_reduce over every size: for kinds not measured
};

/// Measures with \p Time and fits; prints each measurement beside its
/// fitted time, and the ranges, to \p Out.
llvm::Expected<CalibratedLink> calibrate(const CalibrateOptions &O, ReplayTimer Time,
                                         llvm::raw_ostream &Out);

} // namespace collc::tool

#endif
