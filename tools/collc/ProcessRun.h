//===- tools/collc/ProcessRun.h - One rank of a multi-process run -*- C++ -*-===//
//
// `collc run --backend mpi|gloo|nccl` under a launcher: this process runs
// the rank its launcher gave it (runRank) on the executor the table of
// process backends makes for it, checks its own results against the
// reference, and then every rank's figures are gathered over the plan's
// world: rank 0 prints each step's time on every rank and whether every
// rank verified; each rank prints its own error. The digest handshake of the
// run's meeting (runtime/process/ProcessMeeting.h) refuses ranks whose plans differ.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_PROCESSRUN_H
#define COLLC_TOOLS_COLLC_PROCESSRUN_H

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/process/ProcessMeeting.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace collc::tool {

struct ProcessRunOptions {
  std::string Backend;
  rt::ProcessPlace Place;
  rt::RendezvousAddress Where;
  rt::ExecutorOptions Exec;
  unsigned Steps = 3;
};

/// Says \p Why on \p Err as every failure of a rank's run is said, naming
/// the rank ("collc run: rank R of W (backend): ..."); returns the exit code.
int rankFailed(const ProcessRunOptions &O, const llvm::Twine &Why, llvm::raw_ostream &Err);

/// Runs this process's rank of \p P, whose processes met in \p Met;
/// returns the exit code (non-zero on every rank when any rank failed and
/// the others could learn of it).
int runThisProcessRank(const plan::Plan &P, const ProcessRunOptions &O, rt::ProcessMeeting &Met,
                       llvm::raw_ostream &Out, llvm::raw_ostream &Err);

} // namespace collc::tool

#endif
