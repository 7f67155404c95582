//===- runtime/launch/ProcessPlace.h - This process's rank, from its launcher -*- C++ -*-===//
//
// Under a launcher every process runs one rank. The launcher says which in
// its environment: mpirun (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE),
// srun (SLURM_PROCID/NTASKS/LOCALID, and SLURM_STEP_TASKS_PER_NODE) and
// torchrun (RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE),
// looked for in that order, the first found taken; but a torchrun worker
// (GROUP_RANK and LOCAL_WORLD_SIZE set beside RANK) is placed by torchrun
// first, since under srun or mpirun it inherits their variables, which name
// torchrun's own task. Flags given on the command line win over all of
// them. A value that is present but not a number in range is an error that
// names the variable, never a silent default.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LAUNCH_PROCESSPLACE_H
#define COLLC_RUNTIME_LAUNCH_PROCESSPLACE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace collc::rt {

/// Where this process stands among the processes of one run.
struct ProcessPlace {
  int64_t Rank = 0;
  int64_t World = 1;
  /// Rank among the processes of this host (picks the GPU); 0 when unknown.
  int64_t LocalRank = 0;
  /// Processes of this run on this host, which share its memory:
  /// --local-world, the launcher's count (srun's: the most on any node), else
  /// the whole world (LocalWorldSaid false: assumed).
  int64_t LocalWorld = 1;
  bool LocalWorldSaid = false;
  /// Who said so: "mpirun", "srun", "torchrun", "flags".
  std::string Source;
};

/// Values given as flags; each one set overrides the environment.
struct PlaceFlags {
  std::optional<int64_t> Rank, World, LocalRank, LocalWorld;
};

/// Reads a variable of the environment (getenv by default; tests pass a
/// table). Returns nullopt when it is unset.
using EnvironmentLookup = llvm::function_ref<std::optional<std::string>(llvm::StringRef)>;

std::optional<std::string> processEnvironment(llvm::StringRef Name);

/// This process's place: \p Flags over the first launcher whose variables
/// are set. None set and no flags: an error saying which variables were
/// looked for (a run on one process of a process backend still needs to be
/// told its world).
llvm::Expected<ProcessPlace> placeFromLauncher(const PlaceFlags &Flags = {},
                                               EnvironmentLookup Env = processEnvironment);

/// A plan (\p Program, compiled for \p PlanWorld ranks) runs only where the
/// launcher's world is the plan's: refused otherwise, naming both.
llvm::Error checkPlanWorld(llvm::StringRef Program, int64_t PlanWorld, const ProcessPlace &Place);

} // namespace collc::rt

#endif
