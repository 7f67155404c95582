//===- tools/collc/BenchCommand.cpp - collc bench ----------------------===//
//
// collc bench [--json] [--ranks N] [--backend local|mpi|gloo]: on local (the
// default), an nccl-tests style table (op, backend,
// ranks, bytes, time_us, algbw, busbw) of the local backend's all_reduce from
// 8 B to 64 MiB and, measured in the same run, Open MPI's MPI_Allreduce and
// the machine's memory-copy limit; then plan replays (1000 small all_reduces
// fused by the compiler against issued one by one). Every figure is meant to
// be read as a ratio to its neighbours, not as an absolute. On mpi or gloo,
// run under a launcher, each process measures its own rank of a plan replay
// beside the raw engine (bench/ProcessBench.h). With --calibrate -o LINK.json
// it fits a link file on the backend (bench/Calibrate.h), and with
// --calibrate or --validate LINK.json it prints how well the link predicts
// real plans (bench/PredictionCheck.h); this file only dispatches.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"

#include "compiler/Compile.h"
#include "compiler/dump/JSONWriter.h"
#include "plan/OutputFile.h"
#include "passes/analysis/CostModel.h"
#include "passes/analysis/LinkFile.h"
#include "runtime/local/LocalDriver.h"
#include "runtime/process/ProcessBackends.h"
#include "tools/collc/ProcessLaunchFlags.h"
#include "tools/collc/bench/Calibrate.h"
#include "tools/collc/bench/LocalBench.h"
#include "tools/collc/bench/PredictionCheck.h"
#include "tools/collc/bench/ProcessBench.h"
#include "tools/collc/bench/ReplayPlans.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <map>
#include <thread>

using namespace llvm;

namespace collc::tool {

static cl::SubCommand Cmd("bench", "Benchmark the local backend against Open MPI and memcpy");
static cl::opt<bool> Json("json", cl::desc("Print JSON instead of a table"), cl::sub(Cmd));
static cl::opt<int> Ranks("ranks", cl::desc("Ranks (threads; processes for MPI)"), cl::init(2),
                          cl::sub(Cmd));
static cl::opt<std::string> MaxBytes("max-bytes", cl::desc("Largest message"), cl::init("64MiB"),
                                     cl::sub(Cmd));
static cl::opt<double> Budget("time-per-size", cl::desc("Seconds measured per size"),
                              cl::init(0.05), cl::sub(Cmd));
static cl::opt<bool> SkipMpi("skip-mpi", cl::desc("Do not run Open MPI"), cl::sub(Cmd));
static cl::opt<unsigned> ReplayOps("replay-ops", cl::desc("All_reduces in the replay comparison"),
                                   cl::init(1000), cl::sub(Cmd));

static cl::opt<std::string>
    Backend("backend",
            cl::desc("local (default: ranks are threads, beside Open MPI and memcpy), or, under "
                     "a launcher, mpi or gloo: a plan replay beside the raw engine"),
            cl::init("local"), cl::sub(Cmd));
static ProcessLaunchFlags Launch(Cmd);

static cl::opt<bool> Calibrate("calibrate",
                               cl::desc("Fit a link file (-o) to the backend, then check its "
                                        "predictions on real plans"),
                               cl::sub(Cmd));
static cl::opt<std::string> LinkOut("o", cl::desc("--calibrate: the link file to write"),
                                    cl::value_desc("LINK.json"), cl::sub(Cmd));
static cl::opt<std::string> LinkName("link-name",
                                     cl::desc("--calibrate: the name the link file gives"),
                                     cl::init("calibrated"), cl::sub(Cmd));
static cl::opt<std::string> Validate("validate",
                                     cl::desc("Check a link's predictions on real plans "
                                              "replayed on the backend"),
                                     cl::value_desc("LINK"), cl::sub(Cmd));
static cl::list<std::string> CheckPrograms("program",
                                           cl::desc("--calibrate, --validate: a program to "
                                                    "check beside the built-in one (shrunk)"),
                                           cl::value_desc("FILE"), cl::sub(Cmd));

cl::SubCommand &benchCommand() { return Cmd; }

namespace {

struct Row {
  std::string Op, Backend;
  int Ranks;
  uint64_t Bytes;
  double TimeUs;
  double algbw() const { return TimeUs > 0 ? double(Bytes) / TimeUs / 1e3 : 0; }
  double busbw() const {
    return algbw() * std::max(1.0, busBandwidthFactor(OpKind::AllReduce, Ranks));
  }
};

/// Runs the Open MPI comparison under mpirun; rows, or why it was skipped.
Expected<std::vector<Row>> runMpi(const char *Argv0, uint64_t Max) {
  std::string Self = sys::fs::getMainExecutable(Argv0, reinterpret_cast<void *>(&runMpi));
  SmallString<256> Bench(sys::path::parent_path(Self));
  sys::path::append(Bench, "collc-mpi-allreduce");
  if (!sys::fs::exists(Bench))
    return createStringError(inconvertibleErrorCode(),
                             "collc was built without Open MPI (apt-get install libopenmpi-dev "
                             "openmpi-bin, then rebuild)");
  ErrorOr<std::string> Mpirun = sys::findProgramByName("mpirun");
  if (!Mpirun)
    return createStringError(inconvertibleErrorCode(),
                             "mpirun is not installed (apt-get install openmpi-bin)");
  SmallString<128> Out;
  if (std::error_code EC = sys::fs::createTemporaryFile("collc-mpi", "txt", Out))
    return createStringError(EC, "cannot create a temporary file");
  std::string MaxArg = std::to_string(Max), BudgetArg = std::to_string(Budget.getValue());
  std::string Np = std::to_string(Ranks.getValue());
  // One core per rank, as the local rows pin their threads; with more ranks
  // than cores neither side pins.
  StringRef Binding = unsigned(Ranks) <= std::thread::hardware_concurrency() ? "core" : "none";
  SmallVector<StringRef, 16> Args = {
      *Mpirun, "-np",  Np,       "--allow-run-as-root", "--oversubscribe", "--bind-to", Binding,
      Bench,   MaxArg, BudgetArg};
  Optional<StringRef> Redirects[] = {StringRef(""), StringRef(Out), StringRef(Out)};
  std::string Err;
  int Rc = sys::ExecuteAndWait(*Mpirun, Args, None, Redirects, /*SecondsToWait=*/600, 0, &Err);
  auto Text = MemoryBuffer::getFile(Out);
  sys::fs::remove(Out);
  if (Rc != 0 || !Text)
    return createStringError(inconvertibleErrorCode(), "mpirun failed (exit %d%s%s): %s", Rc,
                             Err.empty() ? "" : ", ", Err.c_str(),
                             Text ? (*Text)->getBuffer().take_back(400).str().c_str() : "");
  std::vector<Row> Rows;
  SmallVector<StringRef, 0> Lines;
  (*Text)->getBuffer().split(Lines, '\n');
  for (StringRef L : Lines) {
    auto [B, T] = L.trim().split(' ');
    uint64_t Bytes;
    double Us;
    if (B.getAsInteger(10, Bytes) || T.getAsDouble(Us))
      continue;
    Rows.push_back({"all_reduce", "mpi", Ranks, Bytes, Us});
  }
  if (Rows.empty())
    return createStringError(inconvertibleErrorCode(), "mpirun printed no measurements");
  return Rows;
}

} // namespace

extern const char *CollcArgv0;

/// --calibrate and --validate: fit (or read) a link, then compare its
/// predictions with replays of real plans, on local (ranks are threads) or,
/// under a launcher, on mpi or gloo (every process measures its rank; rank 0
/// prints and writes).
static int runLinkCheck(uint64_t Max) {
  auto Usage = [](const Twine &Msg) {
    ErrorLine("collc bench") << Msg << '\n';
    return ExitUsage;
  };
  bool Local = Backend == "local";
  if (!Local && !rt::isProcessBackend(Backend))
    return Usage("--backend " + Backend + ": expected local, " + rt::processBackendNames());
  // Exactly one of the two modes.
  if (Calibrate == (Validate.getNumOccurrences() > 0) || (Calibrate && LinkOut.empty()))
    return Usage("expected --calibrate -o LINK.json or --validate LINK");
  int64_t World = Ranks;
  std::unique_ptr<ProcessReplayTimer> Proc;
  if (!Local) {
    if (Ranks.getNumOccurrences())
      return Usage("--ranks applies to --backend local; the launcher gives the world");
    Expected<ProcessLaunch> Launched = Launch.resolve(Backend);
    if (!Launched)
      return Usage(toString(Launched.takeError()));
    Expected<std::chrono::milliseconds> Timeout = rt::timeoutFromEnvironment();
    if (!Timeout)
      return Usage(toString(Timeout.takeError()));
    ProcessBenchOptions O;
    O.Backend = Backend;
    O.Place = Launched->Place;
    O.Where = Launched->Where;
    O.Timeout = *Timeout;
    // What the ranks compare before they measure (ReplayOps is the plain
    // bench's: its default on every rank).
    O.MaxBytes = Max;
    O.BudgetSec = Budget;
    Expected<std::unique_ptr<ProcessReplayTimer>> T = ProcessReplayTimer::create(O);
    if (!T)
      return reportError("bench", T.takeError());
    Proc = std::move(*T);
    World = O.Place.World;
  }
  if (World < 2)
    return Usage(formatv("calibration needs 2 ranks or more, not {0}", World));
  auto Time = [&](const plan::Plan &P, double BudgetSec) -> Expected<double> {
    return Proc ? Proc->time(P, BudgetSec) : rt::timePlanReplayFor(P, BudgetSec);
  };
  bool Printer = !Proc || Proc->rank() == 0;
  raw_ostream &Out = Printer ? outs() : nulls();
  std::string LinkArg = Calibrate ? LinkOut.getValue() : Validate.getValue();
  if (Calibrate) {
    CalibrateOptions O;
    O.Backend = Backend;
    O.World = World;
    O.MaxBytes = Max;
    O.BudgetSec = Budget;
    O.Name = LinkName;
    // Every rank fits the same figures (they are gathered); rank 0 writes.
    Expected<CalibratedLink> Fitted = calibrate(O, Time, Out);
    if (!Fitted)
      return reportError("bench", Fitted.takeError());
    if (Printer) {
      std::vector<StringRef> Read(CheckPrograms.begin(), CheckPrograms.end());
      Expected<std::unique_ptr<OutputFile>> File = OutputFile::create(LinkOut, Read);
      if (!File)
        return reportError("bench", File.takeError());
      writeLinkFile(Fitted->Fit, Fitted->Overall, (*File)->os());
      if (Error E = (*File)->commit())
        return reportError("bench", std::move(E));
      Out << "# wrote " << LinkOut << "\n";
    }
    // The others read it below (auto:<file> compiles read it too).
    if (Proc)
      if (Error E = Proc->barrier())
        return reportError("bench", std::move(E));
  }
  // Read back as every --link reads it: the check uses what was written.
  Expected<LinkClass> Link = resolveLink(LinkArg);
  if (!Link)
    return reportError("bench", Link.takeError());
  std::vector<CheckProgram> Programs = {
      {"transformer_ddp", transformerDdpProgram(World, /*Layers=*/12)}};
  for (const std::string &F : CheckPrograms) {
    Expected<CommandInput> In = readCommandInput(F);
    if (!In)
      return reportError("bench", In.takeError());
    if (In->isPlan())
      return Usage("--program " + F + ": expected a program");
    Programs.push_back({sys::path::stem(F).str(), In->text().str()});
  }
  std::vector<std::string> Policies = {"none", "fixed:256KiB", "fixed:1MiB", "fixed:4MiB",
                                       "ddp", "auto"};
  Expected<PredictionSummary> S =
      checkPredictions(*Link, LinkArg, Programs, World, Policies, Budget, Backend, Time, Out);
  if (!S)
    return reportError("bench", S.takeError());
  return ExitOk;
}

namespace {

/// The flags, checked before anything is measured; the exit code where
/// they are wrong.
std::optional<int> checkBenchFlags(uint64_t &Max) {
  auto Usage = [](const Twine &Why) {
    ErrorLine("collc bench") << Why << '\n';
    return ExitUsage;
  };
  Expected<uint64_t> Given = parseByteSize(MaxBytes);
  if (!Given)
    return Usage("--max-bytes '" + MaxBytes + "': " + toString(Given.takeError()));
  Max = *Given;
  // Ranks are threads: no more than the local backend holds (as collc run).
  constexpr size_t MaxRanks = rt::local::LocalDriver::MaxRanks;
  constexpr int MaxTimePerSize = 3600;
  // Not `Budget <= 0`: NaN passes that; infinity and 1e308 never end.
  bool BudgetOk = Budget > 0 && Budget <= MaxTimePerSize;
  // Each size is held twice per rank (and replayed with up to eight copies
  // a rank in a calibration); the fused comparison fuses at most
  // MaxReplayOps all_reduces into one (ReplayPlans.h).
  constexpr uint64_t MaxBenchBytes = 1ull << 30;
  if (Max < 8 || Max > MaxBenchBytes || Ranks < 1 || size_t(Ranks) > MaxRanks || !BudgetOk ||
      ReplayOps < 1 || ReplayOps > MaxReplayOps)
    return Usage(formatv("expected --max-bytes in 8..1GiB (got {0}), --ranks in 1..{4} (got "
                         "{1}), --time-per-size in (0, {5}] s (got {2:e2}) and --replay-ops in "
                         "1..{6} (got {3})",
                         Max, int(Ranks), double(Budget), unsigned(ReplayOps), MaxRanks,
                         MaxTimePerSize, MaxReplayOps));
  // The link check's flags, given to a plain bench, would be ignored.
  bool LinkCheck = Calibrate || Validate.getNumOccurrences();
  for (const cl::Option *O : {(const cl::Option *)&LinkOut, (const cl::Option *)&LinkName})
    if (O->getNumOccurrences() && !Calibrate)
      return Usage((O->ArgStr.size() > 1 ? "--" : "-") + O->ArgStr + " applies to --calibrate");
  if (CheckPrograms.getNumOccurrences() && !LinkCheck)
    return Usage("--program applies to --calibrate and --validate");
  if (Backend == "local") {
    if (Error E = Launch.refuseOnLocal())
      return Usage(toString(std::move(E)));
    return std::nullopt;
  }
  if (LinkCheck)
    return std::nullopt;
  if (!rt::isProcessBackend(Backend))
    return Usage("--backend " + Backend + ": expected local, " + rt::processBackendNames());
  // Ranks are the launcher's processes; the MPI comparison is the raw row.
  for (cl::Option *O : {(cl::Option *)&Json, (cl::Option *)&Ranks, (cl::Option *)&SkipMpi})
    if (O->getNumOccurrences())
      return Usage("--" + O->ArgStr + " applies to --backend local");
  return std::nullopt;
}

/// This process's rank of a bench on a process backend.
int benchThisProcess(uint64_t Max) {
  Expected<ProcessLaunch> Launched = Launch.resolve(Backend);
  Expected<std::chrono::milliseconds> Timeout =
      Launched ? rt::timeoutFromEnvironment() : Launched.takeError();
  if (!Timeout) {
    ErrorLine("collc bench") << toString(Timeout.takeError()) << '\n';
    return ExitUsage;
  }
  ProcessBenchOptions O;
  O.Backend = Backend;
  O.Place = Launched->Place;
  O.Where = Launched->Where;
  O.Timeout = *Timeout;
  O.MaxBytes = Max;
  O.BudgetSec = Budget;
  O.ReplayOps = ReplayOps;
  return benchThisProcessRank(O, outs(), errs());
}

/// What the local bench measured, by size.
struct LocalFigures {
  std::vector<Row> Rows;
  std::map<uint64_t, double> Local, Mpi, Limit;
  std::string MpiNote;
  double FusedUs = 0, EagerUs = 0;
  /// The flight record on and off (LocalBench.h).
  rt::RecordCost RecordTiny, RecordFused;

  double at(const std::map<uint64_t, double> &M, uint64_t B) const {
    auto It = M.find(B);
    return It == M.end() ? 0.0 : It->second;
  }
  double busbw(double Us, uint64_t B) const {
    return Us > 0 ? Row{"", "", Ranks, B, Us}.busbw() : 0.0;
  }
};

/// The local backend, Open MPI and the memory-copy limit at every size up
/// to \p Max, and the fused replay against one by one.
Expected<LocalFigures> measureLocal(uint64_t Max) {
  LocalFigures F;
  for (uint64_t B = 8; B <= Max; B *= 2) {
    Expected<double> T = rt::timeLocalAllReduce(Ranks, B, Budget);
    if (!T)
      return T.takeError();
    F.Rows.push_back({"all_reduce", "local", Ranks, B, *T});
    F.Local[B] = *T;
  }
  if (SkipMpi) {
    F.MpiNote = "skipped: --skip-mpi";
  } else if (Expected<std::vector<Row>> M = runMpi(CollcArgv0, Max)) {
    for (const Row &R : *M) {
      F.Rows.push_back(R);
      F.Mpi[R.Bytes] = R.TimeUs;
    }
    F.MpiNote = "Open MPI MPI_Allreduce, one process per rank";
  } else {
    F.MpiNote = "skipped: " + toString(M.takeError());
  }
  for (uint64_t B = 8; B <= Max; B *= 2) {
    double T = rt::timeParallelMemcpy(Ranks, B, Budget);
    F.Rows.push_back({"memcpy", "limit", Ranks, B, T});
    F.Limit[B] = T;
  }
  // Replays: fused by the compiler, and one by one (each blocking).
  uint64_t ReplayBytes = uint64_t(ReplayOps) * 4096;
  Expected<FusedComparison> Plans = fusedComparisonPlans(ReplayOps, Ranks);
  if (!Plans)
    return Plans.takeError();
  Expected<double> Fused = rt::timePlanReplay(Plans->Fused, 100);
  if (!Fused)
    return Fused.takeError();
  Expected<double> Eager = rt::timePlanReplay(Plans->OneByOne, 15);
  if (!Eager)
    return Eager.takeError();
  F.FusedUs = *Fused;
  F.EagerUs = *Eager;
  F.Rows.push_back({"replay-fused", "local", Ranks, ReplayBytes, F.FusedUs});
  F.Rows.push_back({"replay-one-by-one", "local", Ranks, ReplayBytes, F.EagerUs});
  // The flight record's cost, where it is largest against the work: one
  // all_reduce of 8 B a step, and the fused replay (Rounds pairs on/off).
  constexpr unsigned Rounds = 5;
  Expected<plan::Plan> Tiny = oneAllReducePlan(8, Ranks);
  if (!Tiny)
    return Tiny.takeError();
  Expected<rt::RecordCost> AtTiny = rt::timeRecordCost(*Tiny, 1000, Rounds);
  if (!AtTiny)
    return AtTiny.takeError();
  Expected<rt::RecordCost> AtFused = rt::timeRecordCost(Plans->Fused, 100, Rounds);
  if (!AtFused)
    return AtFused.takeError();
  F.RecordTiny = *AtTiny;
  F.RecordFused = *AtFused;
  F.Rows.push_back({"replay-8B", "record", Ranks, 8, AtTiny->OnUs});
  F.Rows.push_back({"replay-8B", "norecord", Ranks, 8, AtTiny->OffUs});
  F.Rows.push_back({"replay-fused", "record", Ranks, ReplayBytes, AtFused->OnUs});
  F.Rows.push_back({"replay-fused", "norecord", Ranks, ReplayBytes, AtFused->OffUs});
  return F;
}

constexpr uint64_t MiB16 = 16ull << 20, MiB64 = 64ull << 20;

void printJson(const LocalFigures &F) {
  JSONWriter J(outs(), 2);
  J.objectBegin();
  J.attribute("ranks", Ranks.getValue());
  J.attribute("mpi", F.MpiNote);
  J.attributeArray("rows", [&] {
    for (const Row &R : F.Rows)
      J.object([&] {
        J.attribute("op", R.Op);
        J.attribute("backend", R.Backend);
        J.attribute("ranks", R.Ranks);
        J.attribute("bytes", int64_t(R.Bytes));
        J.attribute("time_us", R.TimeUs);
        J.attribute("algbw", R.algbw());
        J.attribute("busbw", R.busbw());
      });
  });
  J.attributeObject("summary", [&] {
    J.attribute("latency_8B_local_us", F.at(F.Local, 8));
    J.attribute("latency_8B_mpi_us", F.at(F.Mpi, 8));
    J.attribute("busbw_16MiB_local_over_mpi",
                F.at(F.Mpi, MiB16) > 0 ? F.at(F.Mpi, MiB16) / F.at(F.Local, MiB16) : 0.0);
    J.attribute("busbw_64MiB_local_over_mpi",
                F.at(F.Mpi, MiB64) > 0 ? F.at(F.Mpi, MiB64) / F.at(F.Local, MiB64) : 0.0);
    J.attribute("fraction_of_memcpy_limit_64MiB",
                F.at(F.Local, MiB64) > 0 ? F.at(F.Limit, MiB64) / F.at(F.Local, MiB64) : 0.0);
    J.attribute("replay_fused_us", F.FusedUs);
    J.attribute("replay_one_by_one_us", F.EagerUs);
    J.attribute("replay_speedup", F.FusedUs > 0 ? F.EagerUs / F.FusedUs : 0.0);
    J.attribute("record_overhead_8B", F.RecordTiny.overhead());
    J.attribute("record_overhead_fused", F.RecordFused.overhead());
  });
  J.objectEnd();
  outs() << '\n';
}

void printTable(const LocalFigures &F) {
  outs() << formatv("# collc bench: all_reduce f32 sum, out of place, {0} ranks; each call "
                    "issued and waited for\n",
                    Ranks.getValue());
  outs() << "# local: collc's local backend (ranks are threads); mpi: " << F.MpiNote << "\n";
  outs() << "# memcpy/limit: every rank copying its message at once, the least time an "
            "all_reduce can take\n";
  outs() << "# record/norecord: a plan replay with the flight record on (the default) and off\n";
  outs() << formatv("{0,18} {1,8} {2,5} {3,12} {4,12} {5,11} {6,11}\n", "op", "backend", "ranks",
                    "bytes", "time_us", "algbw_GB/s", "busbw_GB/s");
  for (const Row &R : F.Rows)
    outs() << formatv("{0,18} {1,8} {2,5} {3,12} {4,12:f2} {5,11:f3} {6,11:f3}\n", R.Op,
                      R.Backend, R.Ranks, R.Bytes, R.TimeUs, R.algbw(), R.busbw());
  outs() << "# summary\n";
  if (!F.Mpi.empty()) {
    outs() << formatv("#   8 B latency: local {0:f3} us, mpi {1:f3} us (local/mpi {2:f2})\n",
                      F.at(F.Local, 8), F.at(F.Mpi, 8),
                      F.at(F.Mpi, 8) > 0 ? F.at(F.Local, 8) / F.at(F.Mpi, 8) : 0);
    for (uint64_t B : {MiB16, MiB64})
      if (F.at(F.Local, B) > 0 && F.at(F.Mpi, B) > 0)
        outs() << formatv("#   {0} MiB busbw: local {1:f2} GB/s, mpi {2:f2} GB/s ({3:f2}x)\n",
                          B >> 20, F.busbw(F.at(F.Local, B), B), F.busbw(F.at(F.Mpi, B), B),
                          F.at(F.Mpi, B) / F.at(F.Local, B));
  } else {
    outs() << "#   mpi " << F.MpiNote << "\n";
  }
  if (F.at(F.Local, MiB64) > 0)
    outs() << formatv("#   64 MiB: local takes {0:f2} ms; {1} threads copying 64 MiB each take "
                      "{2:f2} ms: {3:f0}% of the memory-copy limit\n",
                      F.at(F.Local, MiB64) / 1e3, Ranks.getValue(), F.at(F.Limit, MiB64) / 1e3,
                      100.0 * F.at(F.Limit, MiB64) / F.at(F.Local, MiB64));
  outs() << formatv("#   replay of {0} all_reduces of 4 KiB: fused by the compiler {1:f1} "
                    "us/step, issued one by one {2:f1} us/step ({3:f1}x faster fused)\n",
                    ReplayOps.getValue(), F.FusedUs, F.EagerUs,
                    F.FusedUs > 0 ? F.EagerUs / F.FusedUs : 0);
  auto Percent = [](double Fraction) {
    return formatv("{0}{1:f2}%", Fraction >= 0 ? "+" : "", 100 * Fraction).str();
  };
  outs() << formatv("#   flight record: {0} at 8 B ({1:f3} us/step with it, {2:f3} "
                    "without), {3} on the fused replay ({4:f1} vs {5:f1} us/step)\n",
                    Percent(F.RecordTiny.overhead()), F.RecordTiny.OnUs, F.RecordTiny.OffUs,
                    Percent(F.RecordFused.overhead()), F.RecordFused.OnUs,
                    F.RecordFused.OffUs);
}

} // namespace

int run_benchCommand() {
  uint64_t Max = 0;
  if (std::optional<int> Exit = checkBenchFlags(Max))
    return *Exit;
  if (Calibrate || Validate.getNumOccurrences())
    return runLinkCheck(Max);
  if (Backend != "local")
    return benchThisProcess(Max);
  Expected<LocalFigures> F = measureLocal(Max);
  if (!F)
    return reportError("bench", F.takeError());
  if (Json)
    printJson(*F);
  else
    printTable(*F);
  return ExitOk;
}

} // namespace collc::tool
