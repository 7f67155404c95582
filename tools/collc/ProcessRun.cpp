//===- tools/collc/ProcessRun.cpp - One rank of a multi-process run ----------===//

#include "tools/collc/ProcessRun.h"

#include "tools/collc/LocalRun.h"
#include "runtime/process/ProcessBackends.h"
#include "tools/collc/RankReport.h"
#include "tools/collc/ToolSupport.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::tool {

int rankFailed(const ProcessRunOptions &O, const Twine &Why, raw_ostream &Err) {
  Err << formatv("collc run: rank {0} of {1} ({2}): ", O.Place.Rank, O.Place.World, O.Backend)
      << Why << '\n';
  Err.flush();
  return ExitUserError;
}

/// A rank that fails before its executor exists (its plan differs from the
/// others', a group cannot be joined) leaves a record too where the run
/// keeps them: no events, its error.
static Error recordBeforeTheExecutor(const plan::Plan &P, const ProcessRunOptions &O, Error E) {
  if (O.Exec.Record.Dir.empty())
    return E;
  rt::FlightRecorder Record(P, O.Place.Rank, O.Backend, O.Exec.Record);
  return rt::recordFailure(Record, std::move(E), std::nullopt); // the world's ranks
}

int runThisProcessRank(const plan::Plan &P, const ProcessRunOptions &O, rt::ProcessMeeting &Met,
                       raw_ostream &Out, raw_ostream &Err) {
  int64_t Me = O.Place.Rank;
  auto Fail = [&](const Twine &Why) { return rankFailed(O, Why, Err); };
  if (Me == 0) {
    Out << formatv("running @{0} on {1} {2} processes for {3} steps (plan {4}, rendezvous {5})\n",
                   P.Program, O.Place.World, O.Backend, O.Steps, P.Digest, O.Where.text());
    Out.flush();
  }
  // Every process's plan digest, before any group of the plan is joined: a
  // process whose plan differs is named at once. (Over gloo the groups are
  // named by the plan's digest, so processes with different plans would
  // never meet there, each waiting out its timeout instead.)
  if (Error E = Met.agreeOnPlan(P, O.Steps))
    return Fail(toString(recordBeforeTheExecutor(P, O, std::move(E))));
  // The plans agree: the executor's own handshake would gather them again.
  rt::ExecutorOptions Exec = O.Exec;
  Exec.DigestHandshake = false;
  const InjectedFault *Fault = O.Fault ? &*O.Fault : nullptr;
  if (Fault)
    Fault->at(FaultPoint::Join, Me);
  Expected<std::unique_ptr<rt::Executor>> Made =
      rt::createProcessExecutor(O.Backend, P, O.Place, O.Where, Exec);
  if (!Made)
    return Fail(toString(recordBeforeTheExecutor(P, O, Made.takeError())));
  rt::Executor &X = **Made;
  // Each process says the paths of the groups it leads (rank 0 the world's):
  // every group once.
  for (const rt::GroupPath &Path : X.paths())
    if (Path.Leads)
      Out << "path: " << rt::describe(Path) << '\n';
  Out.flush();
  LocalRun::Rank Res;
  runRank(P, X, O.Steps, /*Trace=*/false, Res, Fault);
  // A rank whose steps failed cannot count on its peers for the gather
  // below: it says why and stops; its peers fail too, naming it.
  if (!Res.Error.empty())
    return Fail(Res.Error);
  if (Me == 0)
    for (const std::string &N : X.notes())
      Err << "collc run: note: " << N << '\n';

  RankFigures Mine;
  Mine.Rank = Me;
  Mine.World = O.Place.World;
  Mine.Steps = O.Steps;
  Mine.StepUs = Res.StepUs;
  Mine.BytesMoved = Res.BytesMoved;
  HostView Results(X);
  Expected<rt::CheckSummary> Check =
      checkThisRank(P, O.Backend, Me, [&](int64_t, uint32_t T) { return Results(T); });
  Mine.Verified = bool(Check);
  if (Check) {
    Mine.Checked = *Check;
  } else {
    Err << formatv("collc run: rank {0}: ", Me) << toString(Check.takeError()) << '\n';
    Err.flush();
  }
  int Exit = reportAcrossRanks(
      Mine, O.Backend, [&](ArrayRef<uint32_t> W) { return X.allGatherWords(W); }, Out, Err);
  if (Fault)
    Fault->at(FaultPoint::Finalize, Me);
  return Exit;
}

} // namespace collc::tool
