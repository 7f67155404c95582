//===- tools/collc/dump/Dump.h - Ways to look at a plan -------------*- C++ -*-===//
//
// `collc dump PLAN --format text|json|dot|trace`. One file per format.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_DUMP_DUMP_H
#define COLLC_COMPILER_DUMP_DUMP_H

#include "passes/analysis/CostModel.h"
#include "compiler/plan/Plan.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace collc {

struct DumpOptions {
  bool Explain = false; ///< include the passes' decisions
  LinkClass Link = defaultLinkClass();
};

/// A readable summary: groups, comms in launch order with sizes and tensors,
/// buffers, and (with Explain) why each comm looks the way it does.
void dumpText(const plan::Plan &P, const DumpOptions &Opts, llvm::raw_ostream &OS);
/// An object with `buckets`: per comm its kind, dtype, group, bytes and
/// tensors (names, in order), and more.
void dumpJSON(const plan::Plan &P, const DumpOptions &Opts, llvm::raw_ostream &OS);
/// Graphviz: computes per stream, comms, and the data between them.
void dumpDot(const plan::Plan &P, const DumpOptions &Opts, llvm::raw_ostream &OS);
/// A Chrome/Perfetto trace of the simulated step (one process per rank).
llvm::Error dumpTrace(const plan::Plan &P, const DumpOptions &Opts, llvm::raw_ostream &OS);

/// "9.0 MiB", "768 B".
std::string formatBytes(double Bytes);

} // namespace collc

#endif
