//===- tools/collc/ProcessRun.h - One rank of a multi-process run -*- C++ -*-===//
//
// `collc run --backend mpi|gloo` under a launcher: this process runs the
// rank its launcher gave it (runRank), checks its own results against the
// reference, and then every rank's figures are gathered over the plan's
// world: rank 0 prints each step's time on every rank and whether every
// rank verified; each rank prints its own error. The digest handshake of the
// executor's first capture refuses ranks whose plans differ.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_PROCESSRUN_H
#define COLLC_TOOLS_COLLC_PROCESSRUN_H

#include "compiler/plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/launch/WorldGather.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace collc::tool {

struct ProcessRunOptions {
  std::string Backend;
  rt::ProcessPlace Place;
  rt::RendezvousAddress Where;
  rt::ExecutorOptions Exec;
  unsigned Steps = 3;
};

/// The processes of a run on the host backends (mpi, gloo), met before
/// the plan exists: MPI where the run goes through it, and the CPU world
/// the ranks agree through, once on how to make the plan and then on its
/// digest. Every rank that meets agrees exactly once: one that stops before
/// it still takes part when the meeting ends, saying it cannot run, so that
/// none waits out its timeout for it.
class ProcessMeeting {
public:
  /// Starts MPI if needed and joins the world (group `collc.run/#digests`).
  static llvm::Expected<std::unique_ptr<ProcessMeeting>> meet(const ProcessRunOptions &O);
  ~ProcessMeeting();

  /// Every rank's factor for dividing the program's dimensions (\p Mine;
  /// 1 for a plan; 0: this rank cannot run and says why itself). Returns
  /// the largest, which fits every rank's share of memory, or where
  /// \p Same (factors given by hand), the one all share; an error naming a
  /// rank that sent 0, or two whose given factors differ.
  llvm::Expected<int64_t> agreeOnFactor(int64_t Mine, bool Same);

  /// The world, for the digests; leave() after them frees its connections.
  rt::WorldGather &world() { return *World; }
  void leave() { World.reset(); }

private:
  std::shared_ptr<void> Mpi; // released after the world
  std::unique_ptr<rt::WorldGather> World;
  bool Agreed = false;
};

/// Runs this process's rank of \p P; returns the exit code (non-zero on
/// every rank when any rank failed and the others could learn of it). On
/// mpi and gloo, \p Met is the run's meeting; nccl meets by itself.
int runThisProcessRank(const plan::Plan &P, const ProcessRunOptions &O, ProcessMeeting *Met,
                       llvm::raw_ostream &Out, llvm::raw_ostream &Err);

} // namespace collc::tool

#endif
