//===- tools/collc/ProcessRun.cpp - One rank of a multi-process run ----------===//

#include "tools/collc/ProcessRun.h"

#include "runtime/exec/DigestHandshake.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/process/CpuWorld.h"
#include "tools/collc/LocalRun.h"
#include "tools/collc/ProcessBackends.h"
#include "tools/collc/RankReport.h"
#include "tools/collc/ToolSupport.h"

#if COLLC_HAVE_NCCL
#include "tools/collc/NcclRun.h"
#endif

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <optional>

using namespace llvm;

namespace collc::tool {

namespace {

/// Every process's plan digest, before any group of the plan is joined: a
/// process whose plan differs is named at once. (Over gloo the groups are
/// named by the plan's digest, so processes with different plans would
/// never meet there, each waiting out its timeout instead.)
Error checkPlansAgree(const plan::Plan &P, const ProcessRunOptions &O, rt::WorldGather &World) {
  return rt::exchangeDigests(P, O.Place.Rank,
                             [&](ArrayRef<uint32_t> Words) { return World.allGatherWords(Words); });
}

int runOnHostExecutor(const plan::Plan &P, const ProcessRunOptions &O, ProcessMeeting &Met,
                      raw_ostream &Out, raw_ostream &Err) {
  int64_t Me = O.Place.Rank;
  auto Fail = [&](const Twine &Why) {
    Err << formatv("collc run: rank {0} of {1} ({2}): ", Me, O.Place.World, O.Backend) << Why
        << '\n';
    Err.flush();
    return ExitUserError;
  };
  if (Me == 0) {
    Out << formatv("running @{0} on {1} {2} processes for {3} steps (plan {4}, rendezvous {5})\n",
                   P.Program, O.Place.World, O.Backend, O.Steps, P.Digest, O.Where.text());
    Out.flush();
  }
  if (Error E = checkPlansAgree(P, O, Met.world()))
    return Fail(toString(std::move(E)));
  // Its connections are not needed again (the executor joins its own).
  Met.leave();
  // The plans agree: the executor's own handshake would gather them again.
  rt::ExecutorOptions Exec = O.Exec;
  Exec.DigestHandshake = false;
  Expected<std::unique_ptr<rt::Executor>> Made =
      createProcessExecutor(O.Backend, P, O.Place, O.Where, Exec);
  if (!Made)
    return Fail(toString(Made.takeError()));
  rt::Executor &X = **Made;
  std::vector<std::vector<char>> Storage;
  LocalRun::Rank Res;
  runRank(P, X, O.Steps, /*Trace=*/false, Storage, Res);
  // A rank whose steps failed cannot count on its peers for the gather
  // below: it says why and stops; its peers fail too, naming it.
  if (!Res.Error.empty())
    return Fail(Res.Error);

  RankFigures Mine;
  Mine.Rank = Me;
  Mine.World = O.Place.World;
  Mine.Steps = O.Steps;
  Mine.StepUs = Res.StepUs;
  Mine.BytesMoved = Res.BytesMoved;
  Expected<rt::CheckSummary> Check =
      checkThisRank(P, O.Backend, Me, [&](int64_t, uint32_t T) -> ArrayRef<char> {
        Expected<MutableArrayRef<char>> M = X.tensor(P.Tensors[T].Name);
        if (!M) {
          consumeError(M.takeError());
          return {};
        }
        return *M;
      });
  Mine.Verified = bool(Check);
  if (Check) {
    Mine.Checked = *Check;
  } else {
    Err << formatv("collc run: rank {0}: ", Me) << toString(Check.takeError()) << '\n';
    Err.flush();
  }
  return reportAcrossRanks(
      Mine, O.Backend, [&](ArrayRef<uint32_t> W) { return X.allGatherWords(W); }, Out, Err);
}

} // namespace

Expected<std::unique_ptr<ProcessMeeting>> ProcessMeeting::meet(const ProcessRunOptions &O) {
  auto Met = std::make_unique<ProcessMeeting>();
  // MPI lives as long as the run, executors and worlds included.
  Expected<std::shared_ptr<void>> Mpi = rt::startMpiIfNeeded(O.Backend, O.Where);
  if (!Mpi)
    return Mpi.takeError();
  Met->Mpi = std::move(*Mpi);
  Expected<std::unique_ptr<rt::WorldGather>> World =
      rt::joinCpuWorld(O.Place, O.Where, "collc.run/#digests", O.Exec.Timeout);
  if (!World)
    return World.takeError();
  Met->World = std::move(*World);
  return Met;
}

ProcessMeeting::~ProcessMeeting() {
  if (World && !Agreed)
    consumeError(agreeOnFactor(0, false).takeError());
}

Expected<int64_t> ProcessMeeting::agreeOnFactor(int64_t Mine, bool Same) {
  Agreed = true;
  // A factor and whether it was given by hand: ranks that mix the two
  // still agree alike.
  Expected<std::vector<uint32_t>> All = World->allGatherWords({uint32_t(Mine), uint32_t(Same)});
  if (!All)
    return All.takeError();
  size_t Ranks = All->size() / 2;
  auto FactorOf = [&](size_t R) { return (*All)[2 * R]; };
  auto GivenOn = [&](size_t R) { return (*All)[2 * R + 1] != 0; };
  uint32_t Most = 0;
  std::optional<size_t> Given; // the first rank given a factor by hand
  for (size_t R = 0; R != Ranks; ++R) {
    if (FactorOf(R) == 0)
      return rt::makeError(rt::ErrorKind::InvalidArgument,
                           formatv("rank {0} cannot run (its own error says why)", R), int64_t(R));
    Most = std::max(Most, FactorOf(R));
    if (GivenOn(R) && !Given)
      Given = R;
  }
  // A factor given by hand is kept: every rank given one must have the
  // same, and it must be enough for every other rank's share.
  for (size_t R = 0; Given && R != Ranks; ++R) {
    if (GivenOn(R) && FactorOf(R) != FactorOf(*Given))
      return rt::makeError(rt::ErrorKind::Mismatch,
                           formatv("rank {0} was given --shrink {1} and rank {2} --shrink {3}: "
                                   "give every process the same",
                                   *Given, FactorOf(*Given), R, FactorOf(R)),
                           int64_t(R));
    if (!GivenOn(R) && FactorOf(R) > FactorOf(*Given))
      return rt::makeError(rt::ErrorKind::InvalidArgument,
                           formatv("rank {0} was given --shrink {1}, but rank {2} needs {3} to "
                                   "fit its share of its host's memory: give every process "
                                   "the same --shrink",
                                   *Given, FactorOf(*Given), R, FactorOf(R)),
                           int64_t(R));
  }
  if (Given)
    return int64_t(FactorOf(*Given));
  return int64_t(Most);
}

int runThisProcessRank(const plan::Plan &P, const ProcessRunOptions &O, ProcessMeeting *Met,
                       raw_ostream &Out, raw_ostream &Err) {
  if (backendRunsOnDevice(O.Backend)) {
    // MPI lives as long as the run, executors and worlds included.
    Expected<std::shared_ptr<void>> Mpi = rt::startMpiIfNeeded(O.Backend, O.Where);
    if (!Mpi) {
      Err << formatv("collc run: rank {0} of {1} ({2}): ", O.Place.Rank, O.Place.World, O.Backend)
          << toString(Mpi.takeError()) << '\n';
      Err.flush();
      return ExitUserError;
    }
#if COLLC_HAVE_NCCL
    return runThisProcessOnGpu(P, O, Out, Err);
#else
    Err << "collc run: "
        << toString(createProcessExecutor(O.Backend, P, O.Place, O.Where, O.Exec).takeError())
        << '\n';
    return ExitUserError;
#endif
  }
  assert(Met && "the host backends meet before the plan is made");
  return runOnHostExecutor(P, O, *Met, Out, Err);
}

} // namespace collc::tool
