//===- runtime/launch/ProcessPlace.cpp - This process's rank, from its launcher ===//

#include "runtime/launch/ProcessPlace.h"

#include "ir/Types.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstdlib>

using namespace llvm;

namespace collc::rt {

namespace {

/// The variables one launcher sets.
struct LauncherVariables {
  const char *Launcher;
  const char *Rank, *World, *LocalRank;
  /// The processes on this host: a count, or Slurm's per-node list.
  const char *LocalWorld;
  bool LocalWorldPerNode = false;
};

// Looked for in this order, the first found taken: mpirun and srun set
// their own variables even when a job script also exports a torchrun-style
// RANK, and mpirun's processes inside an sbatch job inherit the batch
// script's SLURM_PROCID and SLURM_NTASKS.
constexpr LauncherVariables Mpirun = {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                      "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
                            Srun = {"srun",
                                    "SLURM_PROCID",
                                    "SLURM_NTASKS",
                                    "SLURM_LOCALID",
                                    "SLURM_STEP_TASKS_PER_NODE",
                                    true},
                            Torchrun = {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK",
                                        "LOCAL_WORLD_SIZE"};
constexpr LauncherVariables Launchers[] = {Mpirun, Srun, Torchrun};
// But a torchrun worker (torchrun sets GROUP_RANK and LOCAL_WORLD_SIZE
// beside RANK; a job script's RANK comes without them) is placed by
// torchrun, whatever started torchrun: under srun or mpirun it inherits
// their variables, which name torchrun's own task, not the worker.
constexpr LauncherVariables TorchrunFirst[] = {Torchrun, Mpirun, Srun};

/// The number in \p Name, or an error naming it and its value.
Expected<std::optional<int64_t>> readNumber(EnvironmentLookup Env, const char *Name) {
  std::optional<std::string> Value = Env(Name);
  if (!Value)
    return std::optional<int64_t>();
  int64_t N;
  if (StringRef(*Value).trim().getAsInteger(10, N) || N < 0)
    return createStringError(inconvertibleErrorCode(),
                             formatv("{0}='{1}': expected a non-negative number", Name, *Value));
  return std::optional<int64_t>(N);
}

/// The most tasks on any node in Slurm's per-node list \p Name ("4(x2),3":
/// two nodes of 4, one of 3), or an error naming it and its value. The
/// most, not this node's: every process then judges alike.
Expected<std::optional<int64_t>> readTasksPerNode(EnvironmentLookup Env, const char *Name) {
  std::optional<std::string> Value = Env(Name);
  if (!Value)
    return std::optional<int64_t>();
  int64_t Most = 0;
  SmallVector<StringRef, 8> Items;
  StringRef(*Value).trim().split(Items, ',');
  for (StringRef Item : Items) {
    StringRef Count = Item.take_until([](char C) { return C == '('; });
    StringRef Repeat = Item.drop_front(Count.size());
    int64_t N, Times;
    bool Bad = Count.getAsInteger(10, N) || N < 1;
    if (!Repeat.empty())
      Bad |= !Repeat.consume_front("(x") || !Repeat.consume_back(")") ||
             Repeat.getAsInteger(10, Times) || Times < 1;
    if (Bad)
      return createStringError(inconvertibleErrorCode(),
                               formatv("{0}='{1}': expected tasks per node as Slurm writes them "
                                       "(such as 4(x2),3)",
                                       Name, *Value));
    Most = std::max(Most, N);
  }
  return std::optional<int64_t>(Most);
}

/// The processes on this host by launcher \p L, if it says.
Expected<std::optional<int64_t>> readLocalWorld(EnvironmentLookup Env, const LauncherVariables &L) {
  return L.LocalWorldPerNode ? readTasksPerNode(Env, L.LocalWorld) : readNumber(Env, L.LocalWorld);
}

} // namespace

std::optional<std::string> processEnvironment(StringRef Name) {
  if (const char *V = std::getenv(Name.str().c_str()))
    return std::string(V);
  return std::nullopt;
}

/// The processes on \p Place's host: --local-world; else the count of the
/// launcher that placed it, or (placed by flags) of the first launcher
/// whose count fits the world; else the whole world, assumed.
static Error placeLocalWorld(ProcessPlace &Place, const PlaceFlags &Flags, EnvironmentLookup Env,
                             ArrayRef<LauncherVariables> InOrder) {
  auto OutOfRange = [&](StringRef What) {
    return createStringError(inconvertibleErrorCode(),
                             formatv("{0}: expected the processes on this host, 1 to the "
                                     "world's {1}",
                                     What, Place.World));
  };
  Place.LocalWorld = Place.World;
  Place.LocalWorldSaid = false;
  if (Flags.LocalWorld) {
    if (*Flags.LocalWorld < 1 || *Flags.LocalWorld > Place.World)
      return OutOfRange(formatv("--local-world {0}", *Flags.LocalWorld).str());
    Place.LocalWorld = *Flags.LocalWorld;
    Place.LocalWorldSaid = true;
    return Error::success();
  }
  bool ByFlags = Place.Source == "flags";
  for (const LauncherVariables &L : InOrder) {
    if (!ByFlags && Place.Source != L.Launcher)
      continue;
    Expected<std::optional<int64_t>> N = readLocalWorld(Env, L);
    if (!N) {
      if (!ByFlags)
        return N.takeError();
      consumeError(N.takeError()); // flags place it whatever the launcher holds
      continue;
    }
    if (!*N)
      continue;
    if (**N < 1 || **N > Place.World) {
      // Flags may have set a world the launcher's count does not fit.
      if (ByFlags)
        continue;
      return OutOfRange(formatv("{0}='{1}'", L.LocalWorld, *Env(L.LocalWorld)).str());
    }
    Place.LocalWorld = **N;
    Place.LocalWorldSaid = true;
    return Error::success();
  }
  return Error::success();
}

Expected<ProcessPlace> placeFromLauncher(const PlaceFlags &Flags, EnvironmentLookup Env) {
  ProcessPlace Place;
  bool Found = false;
  bool TorchrunWorker = Env("GROUP_RANK") && Env("LOCAL_WORLD_SIZE") && Env("RANK");
  llvm::ArrayRef<LauncherVariables> InOrder =
      TorchrunWorker ? llvm::ArrayRef(TorchrunFirst) : llvm::ArrayRef(Launchers);
  // --rank and --world together place the process whatever the launcher's
  // rank and world hold (an sbatch job sets SLURM_PROCID without
  // SLURM_NTASKS), at the local rank --local-rank gives, else the first
  // launcher's that is a number below the world (a GPU is chosen by it),
  // else 0.
  if (Flags.Rank && Flags.World) {
    Place.Rank = *Flags.Rank;
    Place.World = *Flags.World;
    Place.LocalRank = 0;
    if (Flags.LocalRank)
      Place.LocalRank = *Flags.LocalRank;
    else
      for (const LauncherVariables &L : InOrder)
        if (Expected<std::optional<int64_t>> Local = readNumber(Env, L.LocalRank); !Local)
          consumeError(Local.takeError());
        else if (*Local && **Local < Place.World) {
          Place.LocalRank = **Local;
          break;
        }
    Place.Source = "flags";
    Found = true;
  }
  for (const LauncherVariables &L : Found ? llvm::ArrayRef<LauncherVariables>() : InOrder) {
    Expected<std::optional<int64_t>> Rank = readNumber(Env, L.Rank);
    if (!Rank)
      return Rank.takeError();
    Expected<std::optional<int64_t>> World = readNumber(Env, L.World);
    if (!World)
      return World.takeError();
    if (!*Rank && !*World)
      continue;
    if (!*Rank || !*World)
      return createStringError(inconvertibleErrorCode(),
                               formatv("{0} is set but {1} is not: a {2} launch sets both",
                                       *Rank ? L.Rank : L.World, *Rank ? L.World : L.Rank,
                                       L.Launcher));
    Expected<std::optional<int64_t>> Local = readNumber(Env, L.LocalRank);
    if (!Local)
      return Local.takeError();
    Place.Rank = **Rank;
    Place.World = **World;
    Place.LocalRank = Local->value_or(0);
    Place.Source = L.Launcher;
    Found = true;
    break;
  }
  if (!(Flags.Rank && Flags.World) && (Flags.Rank || Flags.World || Flags.LocalRank)) {
    if (!Found)
      return createStringError(inconvertibleErrorCode(),
                               "no launcher environment: give both --rank and --world");
    Place.Rank = Flags.Rank.value_or(Place.Rank);
    Place.World = Flags.World.value_or(Place.World);
    Place.LocalRank = Flags.LocalRank.value_or(Found ? Place.LocalRank : 0);
    Place.Source = "flags";
    Found = true;
  }
  if (!Found)
    return createStringError(
        inconvertibleErrorCode(),
        "no launcher environment: expected OMPI_COMM_WORLD_RANK/SIZE (mpirun), "
        "SLURM_PROCID/NTASKS (srun) or RANK/WORLD_SIZE (torchrun), or --rank and --world");
  if (Place.World > MaxWorldSize)
    return createStringError(inconvertibleErrorCode(),
                             formatv("world {0} (from {1}): expected a world of 1..{2}",
                                     Place.World, Place.Source, MaxWorldSize));
  if (Place.World < 1 || Place.Rank >= Place.World)
    return createStringError(inconvertibleErrorCode(),
                             formatv("rank {0} of world {1} (from {2}): expected a rank in "
                                     "0..world-1 and a world of at least 1",
                                     Place.Rank, Place.World, Place.Source));
  if (Error E = placeLocalWorld(Place, Flags, Env, InOrder))
    return E;
  // A host runs at most the world's processes; the local rank picks a GPU.
  if (Place.LocalRank >= Place.World)
    return createStringError(inconvertibleErrorCode(),
                             formatv("local rank {0} of world {1} (from {2}): expected a local "
                                     "rank below the world",
                                     Place.LocalRank, Place.World, Place.Source));
  return Place;
}

Error checkPlanWorld(StringRef Program, int64_t PlanWorld, const ProcessPlace &Place) {
  if (Place.World == PlanWorld)
    return Error::success();
  return makeError(ErrorKind::InvalidArgument,
                   formatv("plan @{0} is for a world of {1} ranks, but {2} says this run has "
                           "{3} processes (this one is rank {4})",
                           Program, PlanWorld, Place.Source, Place.World, Place.Rank));
}

} // namespace collc::rt
