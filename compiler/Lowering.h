//===- compiler/Lowering.h - Program to plan ---------------------*- C++ -*-===//
//
// Lowers a program (after the pass pipeline) to a plan: rank sets from the
// predicates, per-rank peers and roots, buffers and slots from the memory
// plan, one step per op in program order (a blocking collective becomes a
// launch and a wait), and the decisions the passes recorded.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_LOWERING_H
#define COLLC_COMPILER_LOWERING_H

#include "plan/Plan.h"
#include "ir/Program.h"
#include "passes/analysis/BufferLayout.h"

#include "llvm/Support/Error.h"

namespace collc {

struct LoweringOptions {
  /// The buffer layout: plan-memory's result (compileProgram takes it from
  /// the PassContext), so that the plan's buffers are the ones the IR's
  /// `mem` attributes state. Null where no plan-memory ran after the
  /// pipeline's last change: the plan is then laid out with \p Layout, and
  /// a note of the plan says so.
  const BufferLayout *MemoryPlan = nullptr;
  BufferLayoutOptions Layout;
  std::vector<std::string> Notes;
};

llvm::Expected<plan::Plan> lowerToPlan(const Program &P, const LoweringOptions &Opts);

} // namespace collc

#endif
