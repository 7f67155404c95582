//===- compiler/Compile.h - From a program to a plan -------------*- C++ -*-===//
//
// The default pipeline, top to bottom (order matters where commented):
//   verify              the program is well formed on every rank
//   check-cross-rank    ranks agree before anything moves
//   order               canonical order: bucket sees gradient-ready order,
//                       whatever order the input listed independent ops in
//   bucket{policy=ddp}  buckets for all_reduce / all_gather / reduce_scatter
//   fuse                merges what bucketing left (broadcast, all_to_all)
//   order               places merged ops right after their last producer
//   schedule            bounded prefetch of gathers (FSDP's two units in
//                       flight, or what a memory budget allows), then async
//                       launches, waits before first consumers
//   plan-memory         buffers and offsets
//   check-cross-rank    nothing above broke agreement
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_COMPILE_H
#define COLLC_COMPILER_COMPILE_H

#include "compiler/Lowering.h"
#include "compiler/PassManager.h"
#include "plan/Plan.h"

#include <optional>

namespace collc {

/// What `collc check` runs, and what the default pipeline starts with: the
/// program is well formed on every rank, and the ranks agree.
llvm::StringRef checkPipeline();

/// The default pipeline with \p BucketPass in its bucket slot (empty: none),
/// \p PlanMemoryPass in its memory slot and \p SchedulePass in its
/// schedule slot.
std::string defaultPipeline(llvm::StringRef BucketPass = "bucket{policy=ddp}",
                            llvm::StringRef PlanMemoryPass = "plan-memory",
                            llvm::StringRef SchedulePass = "schedule");

/// The schedule pass for `--memory-budget` (0: none) and `--prefetch`
/// (none: FSDP's default, 2): "schedule{memory-budget=...}".
std::string schedulePassFor(uint64_t MemoryBudget, std::optional<unsigned> Prefetch = {});

/// Named baselines for benches (the plan-quality bench): PyTorch FSDP's
/// default prefetch (limit_all_gathers: two units in flight), and every
/// gather launched as early as its shard allows (what collc did before
/// bounded prefetch). Pass either as defaultPipeline's SchedulePass.
std::string fsdpDefaultSchedulePass();
std::string unboundedSchedulePass();

/// Turns a `--bucket` value (ddp, fixed:25MiB, auto, auto:ib-ndr, none) into a bucket
/// pass string for the pipeline; auto gets `--memory-budget` (0: none) too.
llvm::Expected<std::string> bucketPassFor(llvm::StringRef Policy, uint64_t MemoryBudget = 0);

/// Where a compile's time went, in seconds (the scaling bench prints them
/// so that a regression shows its phase; --time-passes splits the passes).
struct CompilePhaseSeconds {
  double Passes = 0, Lowering = 0;
};

struct CompileOptions {
  std::string Pipeline; ///< empty: defaultPipeline()
  PassManagerOptions PM;
  /// Lines for the plan's notes. The buffer layout is not an option here:
  /// it is the pipeline's (plan-memory{align=,views=}).
  std::vector<std::string> Notes;
  /// When set, compileProgram adds the time of its phases here.
  CompilePhaseSeconds *Phases = nullptr;
};

/// Runs the pipeline on \p P (in place) and lowers it; the plan's digest is
/// set. When a pass planned within a memory budget (PassContext's
/// MemoryBudget), the plan's peak memory per rank is checked against it: a
/// located error with the figures where it is over.
llvm::Expected<plan::Plan> compileProgram(Program &P, const CompileOptions &Opts,
                                          DiagnosticEngine &Diags, llvm::raw_ostream &Log);

/// Parses \p Text and compiles it with \p Pipeline (empty: the default
/// pipeline). For tests and benchmarks
/// that hold a small program in memory (every pass's "unchanged" claim is
/// checked, as by default).
llvm::Expected<plan::Plan> compileProgramText(llvm::StringRef Text, llvm::StringRef Pipeline = "",
                                              llvm::StringRef BufferName = "<string>");

/// A program of \p N independent f32[\p Elements] all_reduces (sum) over a
/// world of \p World, each made by its own compute and all used by one.
std::string allReducesProgram(unsigned N, uint64_t Elements, int64_t World);

/// allReducesProgram of f32[1024] (4 KiB) tensors: the benchmarks' replay plan.
std::string tinyAllReducesProgram(unsigned N, int64_t World);

} // namespace collc

#endif
