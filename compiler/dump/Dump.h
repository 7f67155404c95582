//===- compiler/dump/Dump.h - Ways to look at a plan -------------*- C++ -*-===//
//
// `collc dump PLAN --format text|json|dot|trace`. One file per format.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_DUMP_DUMP_H
#define COLLC_COMPILER_DUMP_DUMP_H

#include "passes/analysis/CostModel.h"
#include "passes/analysis/PeakMemory.h"
#include "plan/Plan.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

namespace collc {

/// Steps A..B of a plan, both included, 0-based in the order of its `step`
/// lines.
struct StepRange {
  int64_t First = 0, Last = 0;
};
/// Parses "A..B" (a single "A" is A..A).
llvm::Expected<StepRange> parseStepRange(llvm::StringRef Text);

/// What a DOT dump shows; unset means everything. The parts combine: an op
/// is shown when it passes every one that is set.
struct DotFocus {
  std::optional<int64_t> Rank;    ///< ops that run on this rank
  std::optional<int64_t> Bucket;  ///< this bucket's comm, its producers and consumers
  std::optional<StepRange> Steps; ///< ops with a step in the range (comms: in flight)
};

struct DumpOptions {
  bool Explain = false; ///< include the passes' decisions
  LinkClass Link = defaultLinkClass();
  DotFocus Focus; ///< --format dot only
};

/// A readable summary: groups, comms in launch order with sizes and tensors,
/// buffers, and (with Explain) why each comm looks the way it does.
void dumpText(const plan::Plan &P, const DumpOptions &Opts, llvm::raw_ostream &OS);
/// An object with `buckets`: per comm its kind, dtype, group, bytes and
/// tensors (names, in order), and more.
void dumpJSON(const plan::Plan &P, const DumpOptions &Opts, llvm::raw_ostream &OS);
/// Graphviz: computes and comms in one cluster per layer, the data between
/// them summarised (DumpDot.cpp); an error when the focus names a rank,
/// bucket or step the plan does not have.
llvm::Error dumpDot(const plan::Plan &P, const DumpOptions &Opts, llvm::raw_ostream &OS);
/// A Chrome/Perfetto trace of the simulated step (one process per rank).
llvm::Error dumpTrace(const plan::Plan &P, const DumpOptions &Opts, llvm::raw_ostream &OS);

/// "9.0 MiB", "768 B".
std::string formatBytes(double Bytes);

/// The peak communication memory per rank of \p P (passes/analysis/PeakMemory.h)
/// in words: "29.1 GiB (31234 bytes): 282 tensors + 0 B staging, reached at
/// comm #108 on rank 0". `collc dump` and `collc simulate` print it.
std::string describePeakMemory(const plan::Plan &P, const PeakMemory &M);

} // namespace collc

#endif
