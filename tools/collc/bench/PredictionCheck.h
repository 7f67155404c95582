//===- tools/collc/bench/PredictionCheck.h - Predicted against measured -*- C++ -*-===//
//
// How well a link predicts real plans: each program is compiled under a few
// bucket policies, its step's communication is simulated on the link (the
// comm stream's busy time, from the one step simulator) and the plan is
// replayed on the backend with no compute (the bench's ReplayTimer), so the
// measured step is its communication. One row per (program, policy): the
// buckets, the bytes, predicted and measured time and the relative error;
// then the median and the worst.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_PREDICTIONCHECK_H
#define COLLC_TOOLS_COLLC_BENCH_PREDICTIONCHECK_H

#include "passes/analysis/CostModel.h"
#include "tools/collc/bench/Calibrate.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace collc::tool {

struct CheckProgram {
  std::string Name; ///< for the table and diagnostics
  std::string Text;
};

struct PredictionSummary {
  size_t Rows = 0;
  double MedianRelError = 0, WorstRelError = 0;
};

/// A generated DDP program over \p World ranks: \p Layers transformer blocks
/// (hidden 256) whose gradients are all-reduced as backward produces them,
/// so the check has a real mix of sizes without reading a file.
std::string transformerDdpProgram(int64_t World, unsigned Layers);

/// Compiles each of \p Programs for \p World ranks (shrunk to at most 32 MiB
/// communicated per rank) under each of \p Policies (bucketPassFor
/// spellings), prints the table to \p Out, and summarises it.
llvm::Expected<PredictionSummary> checkPredictions(const LinkClass &Link, llvm::StringRef LinkArg,
                                                   const std::vector<CheckProgram> &Programs,
                                                   int64_t World,
                                                   const std::vector<std::string> &Policies,
                                                   double BudgetSec, llvm::StringRef Backend,
                                                   ReplayTimer Time, llvm::raw_ostream &Out);

} // namespace collc::tool

#endif
