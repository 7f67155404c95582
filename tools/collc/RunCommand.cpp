//===- tools/collc/RunCommand.cpp - collc run --------------------------===//
//
// collc run FILE|PLAN [--ranks N] [--steps S] [--trace OUT] [--record DIR]
//           [--backend local|mpi|gloo|nccl] [--rendezvous file:DIR|redis://H:P|mpi]
//
// Compiles if given a program, then runs the plan: on the local backend
// with one thread per rank, or, under a launcher (mpirun, srun, torchrun),
// as this process's rank on a process backend (ProcessRun.h: mpi, gloo, or
// nccl on a GPU). On local, each compute step writes deterministic synthetic data
// into the tensors it produces, the executor replays the plan, and after the
// last step every rank's communicated results are compared with an
// independently computed reference. Prints the time and bandwidth of each
// step, and can write the measured events as a Chrome trace. With --record,
// each rank's flight record is dumped where a failure, a timeout or SIGUSR1
// finds it (`collc diagnose` reads the dumps).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ExitDeadline.h"
#include "InjectedFault.h"
#include "LocalRun.h"
#include "runtime/process/ProcessBackends.h"
#include "ProcessLaunchFlags.h"
#include "ProcessRun.h"
#include "ToolSupport.h"
#include "plan/OutputFile.h"

#include "compiler/Compile.h"
#include "compiler/Shrink.h"
#include "compiler/dump/ChromeTrace.h"
#include "runtime/local/LocalDriver.h"
#include "runtime/local/LocalExecutor.h"
#include "runtime/verify/PlanChecker.h"
#include "runtime/verify/SyntheticData.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <atomic>
#include <chrono>
#include <limits>
#include <optional>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace llvm;

namespace collc::tool {

static cl::SubCommand Cmd("run", "Run a program or plan and verify it (local ranks, or this "
                                 "process's rank under a launcher)");
static cl::opt<std::string> Input(cl::Positional, cl::desc("<program or plan>"), cl::Required,
                                  cl::sub(Cmd));
static cl::opt<int64_t> Ranks("ranks",
                              cl::desc("Ranks to run (default: the program's world); a program "
                                       "is compiled for this world"),
                              cl::init(0), cl::sub(Cmd));
static cl::opt<unsigned> Steps("steps", cl::desc("Steps to replay"), cl::init(3), cl::sub(Cmd));
static cl::opt<std::string> TraceOut("trace",
                                     cl::desc("Write the measured events of the last step as a "
                                              "Chrome trace"),
                                     cl::value_desc("file"), cl::sub(Cmd));
static cl::opt<std::string> Shrink("shrink",
                                   cl::desc("Divide tensor dimensions by this factor to fit in "
                                            "memory: auto (default) or a number (1: real sizes)"),
                                   cl::init("auto"), cl::sub(Cmd));
static cl::opt<std::string> Budget("memory-budget",
                                   cl::desc("Memory the run may use on this host, shared by "
                                            "the run's processes here: a program is shrunk to "
                                            "fit (--shrink auto), a plan that does not fit is "
                                            "refused (default: 8GiB or a third of RAM, the "
                                            "smaller)"),
                                   cl::sub(Cmd));
static cl::opt<std::string> Bucket("bucket", cl::desc("Bucket policy when compiling a program"),
                                   cl::init("ddp"), cl::sub(Cmd));
static cl::opt<std::string>
    TimeoutMs("timeout-ms",
              cl::desc("Per-operation timeout in ms (default: COLLC_TIMEOUT_MS, else 300000)"),
              cl::sub(Cmd));

static cl::opt<std::string>
    RecordDir("record",
              cl::desc("Dump each rank's flight record (its last comm events, in plan terms) "
                       "into this directory on a failure, a timeout or SIGUSR1, for `collc "
                       "diagnose` (default: COLLC_RECORD_DIR; none)"),
              cl::value_desc("dir"), cl::sub(Cmd));
static cl::opt<bool> RecordAtExit("record-at-exit",
                                  cl::desc("With --record: dump every rank's record at the end "
                                           "of the run too"),
                                  cl::sub(Cmd));

static cl::opt<std::string>
    Backend("backend",
            cl::desc("local (default: ranks are threads of this process), or a backend with one "
                     "process per rank started by a launcher: mpi, gloo, nccl (one GPU "
                     "each)"),
            cl::init("local"), cl::sub(Cmd));
static ProcessLaunchFlags Launch(Cmd, /*WithLocalWorld=*/true);
static cl::opt<std::string>
    InjectFault("inject-fault",
                cl::desc("For fault tests: rank RANK of a process backend stops or kills itself "
                         "at POINT (tools/collc/InjectedFault.h)"),
                cl::value_desc("RANK:POINT:stop|kill"), cl::Hidden, cl::sub(Cmd));

cl::SubCommand &runCommand() { return Cmd; }

namespace {

/// This machine's memory, 0 when unknown.
uint64_t physicalMemory() {
  long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGE_SIZE);
  return Pages > 0 && PageSize > 0 ? uint64_t(Pages) * uint64_t(PageSize) : 0;
}

/// The address space this process may take (ulimit -v), 0 when unlimited.
/// The threads of a run's ranks take theirs from it too (a stack each).
uint64_t addressSpaceLimit() {
  rlimit Limit;
  if (getrlimit(RLIMIT_AS, &Limit) != 0 || Limit.rlim_cur == RLIM_INFINITY)
    return 0;
  return uint64_t(Limit.rlim_cur);
}

uint64_t defaultBudget() {
  uint64_t Usable = physicalMemory();
  if (uint64_t Limit = addressSpaceLimit(); Limit && (!Usable || Limit < Usable))
    Usable = Limit;
  uint64_t Third = Usable / 3;
  uint64_t Cap = 8ull << 30;
  return Third ? std::min(Third, Cap) : Cap;
}

/// The address space a new thread's stack takes (glibc sizes it from
/// ulimit -s when the process starts).
uint64_t threadStackBytes() {
  pthread_attr_t Attr;
  size_t Bytes = 8u << 20;
  if (pthread_attr_init(&Attr) == 0) {
    pthread_attr_getstacksize(&Attr, &Bytes);
    pthread_attr_destroy(&Attr);
  }
  return Bytes;
}

/// "3 MiB", or "512 bytes" below a MiB, for messages about memory.
std::string sizeText(uint64_t Bytes) {
  return Bytes < (1u << 20) ? formatv("{0} bytes", Bytes).str()
                            : formatv("{0} MiB", Bytes >> 20).str();
}

/// The memory a run may use on this host: --memory-budget, else 8 GiB or a
/// third of RAM (or of the address-space limit, where that is less).
Expected<uint64_t> hostBudget() {
  if (Budget.empty())
    return defaultBudget();
  Expected<uint64_t> Given = parseByteSize(Budget);
  if (!Given)
    return Given.takeError();
  // A budget the machine does not have would let a run allocate until the
  // system refuses (an abort, not an error).
  if (uint64_t Memory = physicalMemory(); Memory && *Given > Memory)
    return createStringError(inconvertibleErrorCode(),
                             "--memory-budget %s is more than this machine's memory (%s)",
                             Budget.c_str(), sizeText(Memory).c_str());
  if (uint64_t Limit = addressSpaceLimit(); Limit && *Given > Limit)
    return createStringError(inconvertibleErrorCode(),
                             "--memory-budget %s is more than this process's address-space limit "
                             "(ulimit -v: %s)",
                             Budget.c_str(), sizeText(Limit).c_str());
  return *Given;
}

/// What this process may use, and how to say it.
struct RunBudget {
  uint64_t Bytes;
  std::string Text;
};

/// The host's budget, or under a launcher (\p Place) this process's share of
/// it: the run's processes on this host each hold their own rank at once.
Expected<RunBudget> runBudget(const rt::ProcessPlace *Place) {
  Expected<uint64_t> Host = hostBudget();
  if (!Host)
    return Host.takeError();
  if (!Place || Place->LocalWorld <= 1)
    return RunBudget{*Host, sizeText(*Host)};
  uint64_t Share = *Host / uint64_t(Place->LocalWorld);
  return RunBudget{Share, formatv("{0} (this process's share of {1} with {2} processes on this "
                                  "host{3})",
                                  sizeText(Share), sizeText(*Host), Place->LocalWorld,
                                  Place->LocalWorldSaid
                                      ? ""
                                      : ", the whole world, as nothing said how many are here: "
                                        "--local-world N says")
                              .str()};
}

/// What a run holds at once, by the rule both paths use: the executor's
/// tensors and the checker's copy and reference, about three copies of
/// every communicated tensor on every rank. Saturates instead of wrapping.
uint64_t runBytes(uint64_t CommunicatedOnAllRanks) {
  return SaturatingMultiply<uint64_t>(3, CommunicatedOnAllRanks);
}

/// The bytes of the tensors a plan's comms touch, summed over its ranks, or
/// on rank \p Only (a process backend's process holds its own rank only).
uint64_t communicatedBytes(const plan::Plan &P, std::optional<int64_t> Only = std::nullopt) {
  uint64_t Sum = 0;
  std::vector<int64_t> SeenOn(P.Tensors.size(), -1);
  for (int64_t R = Only.value_or(0); R != (Only ? *Only + 1 : P.World); ++R)
    for (const plan::Comm &C : P.Comms) {
      const plan::CommSide *S = C.sideOn(R); // a joint comm's: rank R's tensors
      if (!S)
        continue;
      for (const std::vector<uint32_t> *Ts : {&S->Inputs, &S->Outputs})
        for (uint32_t T : *Ts)
          if (SeenOn[T] != R) {
            SeenOn[T] = R;
            Sum = SaturatingAdd<uint64_t>(Sum, P.Tensors[T].Type.bytes());
          }
    }
  return Sum;
}

/// The factor \p Prog's dimensions are divided by to fit \p Limit: the
/// memory of all its ranks, or of one (\p OneRankHere: a process backend's
/// process); --shrink auto's smallest that fits, or the one given.
Expected<int64_t> shrinkFactor(const Program &Prog, bool OneRankHere, const RunBudget &Limit) {
  auto Need = [&](int64_t F) {
    return runBytes(SaturatingMultiply<uint64_t>(communicatedBytesPerRank(Prog, F),
                                                 OneRankHere ? 1 : uint64_t(Prog.worldSize())));
  };
  constexpr int64_t MaxFactor = 1 << 20;
  int64_t Factor = 1;
  if (Shrink == "auto") {
    while (Factor < MaxFactor && Need(Factor) > Limit.Bytes)
      Factor *= 2;
    // Never claim a fit that was not reached.
    if (Need(Factor) > Limit.Bytes)
      return createStringError(inconvertibleErrorCode(),
                               "@%s does not fit in the memory budget of %s even with every "
                               "dimension divided by %lld: it needs %s; raise --memory-budget",
                               Prog.name().str().c_str(), Limit.Text.c_str(), (long long)Factor,
                               sizeText(Need(Factor)).c_str());
  } else if (StringRef(Shrink).getAsInteger(10, Factor) || Factor < 1 || Factor > MaxFactor) {
    return createStringError(inconvertibleErrorCode(),
                             "--shrink=%s: expected auto or a factor from 1 to %lld",
                             Shrink.c_str(), (long long)MaxFactor);
  } else if (Need(Factor) > Limit.Bytes) {
    return createStringError(inconvertibleErrorCode(),
                             "@%s needs %s with every dimension divided by %lld, more than the "
                             "memory budget of %s: give a larger --shrink, --shrink auto, or "
                             "raise --memory-budget",
                             Prog.name().str().c_str(), sizeText(Need(Factor)).c_str(),
                             (long long)Factor, Limit.Text.c_str());
  }
  return Factor;
}

/// Compiles the program for \p World ranks (0: its own world), shrunk to
/// fit \p Limit (shrinkFactor). With \p Met (the processes of a run on mpi
/// or gloo), every process shrinks by one factor: the largest any needs
/// (--shrink auto), so that all compile one plan even where their hosts'
/// shares differ, or the one they were all given.
Expected<plan::Plan> compileForRun(const CommandInput &In, int64_t World, bool OneRankHere,
                                   const RunBudget &Limit, rt::ProcessMeeting *Met, raw_ostream &Log) {
  ParseOptions PO;
  PO.WorldSize = World;
  Expected<ParsedProgram> P = parseProgramText(In.text(), In.Name, PO);
  Expected<int64_t> Own =
      P ? shrinkFactor(*P->Prog, OneRankHere, Limit) : Expected<int64_t>(P.takeError());
  if (!Own)
    return Own.takeError(); // the meeting, if any, hears 0 when it ends
  rt::ProcessMeeting::Factor Factor{*Own, std::nullopt};
  if (Met) {
    Expected<rt::ProcessMeeting::Factor> Agreed = Met->agreeOnFactor(*Own, /*Given=*/Shrink != "auto");
    if (!Agreed)
      return Agreed.takeError();
    Factor = *Agreed;
  }
  Program &Prog = *P->Prog;
  if (Factor.Value > 1) {
    uint64_t RealBytes = communicatedBytesPerRank(Prog);
    if (Error E = shrinkProgram(Prog, Factor.Value))
      return E;
    // Given here, given to another rank, needed here, or needed by another.
    bool Auto = Shrink == "auto", Mine = Factor.Value == *Own;
    std::string Why = !Auto            ? std::string("as given")
                      : Factor.GivenOn ? formatv("as rank {0} was given", *Factor.GivenOn).str()
                      : Mine
                          ? "to fit in " + Limit.Text
                          : formatv("to fit every rank's share of memory (here {0}x fits in {1})",
                                    *Own, sizeText(Limit.Bytes))
                                .str();
    Log << formatv("shrunk tensor dimensions by {0}x {1}: {2} MiB per rank instead of {3}{4}\n",
                   Factor.Value, Why, communicatedBytesPerRank(Prog) >> 20, RealBytes >> 20,
                   Auto && Mine && !Factor.GivenOn ? "; --shrink 1 runs the real sizes" : "");
  }
  DiagnosticEngine Diags(P->Source.get());
  return compileWithBucketPolicy(Prog, Diags, Bucket);
}

/// The last step's measured events of every rank as a Chrome trace: compute
/// on thread 0, the comm stream's launches and waits on thread 1, times
/// from the step's first event.
Error writeTrace(OutputFile &Out, const plan::Plan &P,
                 const std::vector<std::unique_ptr<rt::Executor>> &Execs, double StepUs) {
  JSONWriter J(Out.os(), 1);
  double Origin = std::numeric_limits<double>::max();
  for (const auto &X : Execs)
    for (const rt::TraceEvent &E : X->trace())
      Origin = std::min(Origin, E.StartUs);
  auto OtherData = [&] {
    J.attribute("backend", "local");
    J.attribute("step_us", StepUs);
  };
  writeChromeTrace(J, P, OtherData, [&] {
    for (size_t R = 0; R != Execs.size(); ++R) {
      J.object([&] {
        J.attribute("ph", "M");
        J.attribute("name", "process_name");
        J.attribute("pid", int64_t(R));
        J.attributeObject("args", [&] { J.attribute("name", "rank " + std::to_string(R)); });
      });
      for (const rt::TraceEvent &E : Execs[R]->trace())
        J.object([&] {
          J.attribute("ph", "X");
          J.attribute("name", E.Name);
          J.attribute("cat", E.Category);
          J.attribute("pid", int64_t(R));
          J.attribute("tid", StringRef(E.Category) == "compute" ? 0 : 1);
          J.attribute("ts", E.StartUs - Origin);
          J.attribute("dur", E.DurUs);
        });
    }
  });
  return Out.commit();
}

/// One `collc run`, step by step; each step returns an exit code where the
/// run ends there.
class RunSession {
public:
  /// The flags alone: --steps, --ranks, --timeout-ms, the backend and the
  /// launcher's place.
  std::optional<int> checkFlags();
  /// This rank's own checks, said at once: its input, a plan's refusal by
  /// the backend, what the backend needs on this host, the memory budget.
  /// On a process backend the processes then meet, even one refused here:
  /// the others are told at once and name it.
  std::optional<int> checkThisRankAndMeet();
  /// The plan: read, or compiled (every process alike; rank 0 speaks).
  std::optional<int> load();
  /// Refuses a plan this launch cannot run (its world, its memory).
  std::optional<int> refuseWhatCannotRun();
  /// Runs this process's rank, or every local rank, and reports.
  int run();

private:
  int fail(const Twine &Why, int Exit) {
    ErrorLine("collc run") << Why << '\n';
    return Exit;
  }
  int rankFailedWith(Error E) { return rankFailed(*O, toString(std::move(E)), errs()); }
  /// MPI's start and end bounded: past the deadline this process says what
  /// it waited for and ends (ExitDeadline.h), and mpirun ends the job.
  rt::ProcessMeeting::CallDeadline mpiCallDeadline() const;
  int runLocalRanks(const plan::Plan &P);

  bool Processes = false;
  std::chrono::milliseconds Timeout{};
  rt::RecordOptions Record;
  std::optional<ProcessLaunch> Launched;
  std::optional<ProcessRunOptions> O;
  const rt::ProcessPlace *Place = nullptr;
  std::optional<CommandInput> In;
  std::optional<plan::Plan> GivenPlan;
  std::optional<RunBudget> Limit;
  std::unique_ptr<rt::ProcessMeeting> Met;
  std::optional<plan::Plan> Loaded;
  std::optional<InjectedFault> Fault;
};

rt::ProcessMeeting::CallDeadline RunSession::mpiCallDeadline() const {
  std::string Said = formatv("collc run: rank {0} of {1} ({2}): ", O->Place.Rank, O->Place.World,
                             O->Backend);
  return [Said](StringRef Call, std::chrono::milliseconds Limit) -> std::shared_ptr<void> {
    return std::make_shared<ExitDeadline>(
        Limit, Said + formatv("{0} did not return within {1} ms: a process of the job has not "
                              "reached it (stopped, stuck, or gone); this one ends without it, "
                              "so that mpirun ends the job",
                              Call, Limit.count()));
  };
}

std::optional<int> RunSession::checkFlags() {
  if (Steps == 0)
    return fail("--steps must be at least 1", ExitUsage);
  // 0 is the default's value: given, it is a mistake, not "the world".
  if (Ranks.getNumOccurrences() && Ranks < 1)
    return fail(formatv("--ranks {0}: must be at least 1 (leave it out for the program's world)",
                        int64_t(Ranks)),
                ExitUsage);
  // One default for every wait of the runtime (runtime/exec/Timeout.h).
  Expected<std::chrono::milliseconds> T =
      TimeoutMs.getNumOccurrences() ? rt::parseTimeoutMs(TimeoutMs, "--timeout-ms")
                                    : rt::timeoutFromEnvironment();
  if (!T)
    return fail(toString(T.takeError()), ExitUsage);
  Timeout = *T;
  // Where flight records go: --record, else COLLC_RECORD_DIR.
  Record.Dir = RecordDir.getNumOccurrences()
                   ? std::string(RecordDir)
                   : rt::processEnvironment("COLLC_RECORD_DIR").value_or("");
  Record.DumpAtExit = RecordAtExit;
  if (RecordAtExit && Record.Dir.empty())
    return fail("--record-at-exit needs a directory: --record DIR or COLLC_RECORD_DIR",
                ExitUsage);
  if (!Record.Dir.empty())
    if (std::error_code EC = sys::fs::create_directories(Record.Dir))
      return fail(formatv("--record {0}: cannot make the directory: {1}", Record.Dir,
                          EC.message()),
                  ExitUsage);
  // A process backend: this process is one rank, placed by its launcher.
  Processes = Backend != "local";
  if (InjectFault.getNumOccurrences()) {
    Expected<InjectedFault> F = InjectedFault::parse(InjectFault);
    if (!F)
      return fail(toString(F.takeError()), ExitUsage);
    if (!Processes)
      return fail("--inject-fault stops or kills a rank of a process backend: give --backend",
                  ExitUsage);
    Fault = *F;
  }
  if (!Processes) {
    if (Error E = Launch.refuseOnLocal())
      return fail(toString(std::move(E)), ExitUsage);
    return std::nullopt;
  }
  if (!rt::isProcessBackend(Backend))
    return fail("--backend " + Backend + ": expected local, " + rt::processBackendNames(),
                ExitUsage);
  if (!TraceOut.empty())
    return fail("--trace records the ranks of one process: use it with --backend local",
                ExitUsage);
  Expected<ProcessLaunch> Resolved = Launch.resolve(Backend);
  if (!Resolved)
    return fail(toString(Resolved.takeError()), ExitUsage);
  Launched = std::move(*Resolved);
  Place = &Launched->Place;
  O.emplace();
  O->Backend = Backend;
  O->Place = Launched->Place;
  O->Where = Launched->Where;
  O->Steps = Steps;
  O->Exec.Timeout = Timeout;
  O->Fault = Fault;
  O->Exec.Record = Record;
  return std::nullopt;
}

std::optional<int> RunSession::checkThisRankAndMeet() {
  std::optional<int> Refused;
  if (Processes && Ranks && Ranks != Place->World)
    Refused = fail(formatv("--ranks {0}, but the launcher started {1} processes (from {2}): leave "
                           "--ranks out under a launcher",
                           int64_t(Ranks), Place->World, Place->Source),
                   ExitUsage);
  int Exit = ExitOk;
  if (!Refused && !(In = readBucketedInput("run", Input, Bucket, Exit)))
    Refused = Exit;
  // A plan is read now, with what the backend refuses of a plan alone:
  // every rank judges that alike, so a rank refused there tells no one.
  if (!Refused && In->isPlan()) {
    Expected<plan::Plan> Read = plan::readPlan(In->text(), In->Name);
    if (!Read)
      Refused = Processes ? rankFailedWith(Read.takeError()) : reportError("run", Read.takeError());
    else if (Error E = Processes ? rt::checkProcessPlan(Backend, *Read) : Error::success())
      return rankFailedWith(std::move(E));
    else
      GivenPlan = std::move(*Read);
  }
  // What the backend needs on this host (nccl: a GPU).
  if (!Refused && Processes)
    if (Error E = rt::checkProcessHost(Backend))
      Refused = rankFailedWith(std::move(E));
  if (!Refused) {
    if (Expected<RunBudget> L = runBudget(Place))
      Limit = std::move(*L);
    else
      Refused = reportError("run", L.takeError());
  }
  if (Fault)
    Fault->at(FaultPoint::Start, O->Place.Rank);
  if (Processes) {
    Expected<std::unique_ptr<rt::ProcessMeeting>> M =
        rt::ProcessMeeting::meet(Backend, O->Place, O->Where, Timeout, mpiCallDeadline());
    if (M)
      Met = std::move(*M);
    else if (!Refused)
      return rankFailedWith(M.takeError());
    else
      consumeError(M.takeError()); // this rank's own error was said
  }
  return Refused;
}

std::optional<int> RunSession::load() {
  int64_t CompileWorld = Ranks ? int64_t(Ranks) : Place ? Place->World : 0;
  raw_ostream &CompileLog = Place && Place->Rank != 0 ? nulls() : outs();
  Expected<plan::Plan> P =
      GivenPlan ? std::move(*GivenPlan)
                : compileForRun(*In, CompileWorld, Processes, *Limit, Met.get(), CompileLog);
  if (!P)
    return Met ? rankFailedWith(P.takeError()) : reportError("run", P.takeError());
  // Every rank compiled the same plan and judges it alike.
  if (Processes && !In->isPlan())
    if (Error E = rt::checkProcessPlan(Backend, *P))
      return rankFailedWith(std::move(E));
  Loaded = std::move(*P);
  return std::nullopt;
}

std::optional<int> RunSession::refuseWhatCannotRun() {
  const plan::Plan &P = *Loaded;
  // Ranks are threads: refuse a world the local backend cannot hold before
  // starting any.
  if (!Processes && uint64_t(P.World) > rt::local::LocalDriver::MaxRanks)
    return fail(formatv("@{0} has {1} ranks; the local backend runs at most {2} (one thread "
                        "each): compile it for fewer ranks with --ranks",
                        P.Program, P.World, rt::local::LocalDriver::MaxRanks),
                ExitUserError);
  // A rank is a thread with its comm stream's beside it, each with a
  // stack: under an address-space limit (ulimit -v) they would take the
  // room the run's memory needs, and an allocation would fail (an abort).
  // A limit on threads (a container's pids limit) ends the run with an
  // error naming the rank that could not start (LocalRun.h).
  uint64_t Threads = 2 * uint64_t(P.World), Stacks = Threads * threadStackBytes();
  if (uint64_t Space = addressSpaceLimit(); !Processes && Space && Stacks + Limit->Bytes > Space)
    return fail(formatv("@{0} on {1} local ranks runs {2} threads (a rank's and its comm "
                        "stream's), whose stacks take {3} of address space beside the run's "
                        "memory budget of {4}, and this process may take {5} (ulimit -v): run "
                        "fewer ranks (--ranks), or raise the limit",
                        P.Program, P.World, Threads, sizeText(Stacks), Limit->Text,
                        sizeText(Space)),
                ExitUserError);
  // A plan for another world first: its memory is not this launch's.
  if (Processes && P.World != Place->World)
    return fail(formatv("plan @{0} is for {1} ranks, but the launcher started {2} processes "
                        "(from {3}): launch {1}, or run the program (it is compiled for the "
                        "launch)",
                        P.Program, P.World, Place->World, Place->Source),
                ExitUsage);
  if (In->isPlan()) {
    // A plan's sizes are fixed: refuse before allocating what does not fit.
    std::optional<int64_t> Here;
    if (Place)
      Here = Place->Rank;
    uint64_t Need = runBytes(communicatedBytes(P, Here));
    if (Shrink.getNumOccurrences() && Shrink != "1")
      return fail("--shrink applies to programs; a plan's sizes are fixed: run the program, or "
                  "compile it from a smaller one",
                  ExitUsage);
    if (Need > Limit->Bytes)
      return fail(formatv("plan @{0} needs about {1} {2}, more than the memory budget of {3}: "
                          "run the program instead (it shrinks to fit), or raise "
                          "--memory-budget",
                          P.Program, sizeText(Need),
                          Here ? formatv("for rank {0} in this process", *Here).str()
                               : formatv("on {0} ranks", P.World).str(),
                          Limit->Text),
                  ExitUserError);
  }
  if (Ranks && Ranks != P.World)
    return fail(formatv("the plan is for {0} ranks, not {1}; compile the program for --ranks "
                        "instead",
                        P.World, int64_t(Ranks)),
                ExitUsage);
  return std::nullopt;
}

int RunSession::run() {
  const plan::Plan &P = *Loaded;
  if (!Processes)
    return runLocalRanks(P);
  // A plan's ranks agree only that all can run it.
  if (Met && In->isPlan())
    if (Expected<rt::ProcessMeeting::Factor> Agreed = Met->agreeOnFactor(1, /*Given=*/false);
        !Agreed)
      return rankFailedWith(Agreed.takeError());
  // Every process of the run derives the same communicator names.
  O->Exec.CommPrefix = "collc.run." + P.Digest;
  return runThisProcessRank(P, *O, *Met, outs(), errs());
}

int RunSession::runLocalRanks(const plan::Plan &P) {
  int64_t World = P.World;
  static std::atomic<unsigned> Runs{0};
  rt::ExecutorOptions Opts;
  Opts.CommPrefix = formatv("run{0}.{1}", getpid(), Runs++).str();
  Opts.Timeout = Timeout;
  Opts.Trace = !TraceOut.empty();
  Opts.Record = Record;
  // A trace that cannot be written is said before the steps run: its
  // temporary file is made now. One written in place (a link, a pipe) is
  // opened after the run, which opening would truncate, or wait on.
  std::unique_ptr<OutputFile> Trace;
  auto OpenTrace = [&]() -> Error {
    Expected<std::unique_ptr<OutputFile>> Out = OutputFile::create(TraceOut, {StringRef(Input)});
    if (!Out)
      return Out.takeError();
    Trace = std::move(*Out);
    return Error::success();
  };
  if (Opts.Trace && !OutputFile::writtenInPlace(TraceOut))
    if (Error E = OpenTrace())
      return reportError("run", std::move(E));

  outs() << formatv("running @{0} on {1} local ranks for {2} steps (plan {3})\n", P.Program, World,
                    Steps, P.Digest);
  outs().flush();
  LocalRun Run = runOnLocalRanks(P, Opts, Steps);
  bool Failed = false;
  for (int64_t R = 0; R != World; ++R)
    if (!Run.Ranks[R].Error.empty()) {
      ErrorLine("collc run") << "rank " << R << ": " << Run.Ranks[R].Error << '\n';
      Failed = true;
    }
  if (Failed)
    return ExitUserError;

  uint64_t Moved = Run.Ranks[0].BytesMoved;
  double LastStepUs = 0;
  for (unsigned S = 0; S != Steps; ++S) {
    double Us = 0;
    for (const LocalRun::Rank &Res : Run.Ranks)
      Us = std::max(Us, Res.StepUs[S]);
    LastStepUs = Us;
    outs() << formatv("step {0}: {1,9:f3} ms, {2,8:f2} GB/s ({3:f1} MB communicated by rank 0)\n",
                      S + 1, Us / 1000.0, Us > 0 ? double(Moved) / Us / 1e3 : 0.0,
                      double(Moved) / 1e6);
  }
  // A trace that cannot be written fails the run (after the check below
  // has said whether the results were right).
  auto WriteTrace = [&]() -> Error {
    if (!Opts.Trace)
      return Error::success();
    if (!Trace)
      if (Error E = OpenTrace())
        return E;
    return writeTrace(*Trace, P, Run.Execs, LastStepUs);
  };
  Error TraceError = WriteTrace();

  Expected<rt::CheckSummary> Check = checkLocalRun(P, Run);
  if (!Check) {
    consumeError(std::move(TraceError));
    return reportError("run", Check.takeError());
  }
  outs() << formatv("verified: {0} results on {1} ranks ({2:f1} MB) match the reference\n",
                    Check->TensorsChecked, World, double(Check->BytesChecked) / 1e6);
  if (TraceError)
    return reportError("run", std::move(TraceError));
  return ExitOk;
}

} // namespace

int run_runCommand() {
  RunSession S;
  // In this order: a step that ends the run says why, with its exit code.
  for (auto Step : {&RunSession::checkFlags, &RunSession::checkThisRankAndMeet, &RunSession::load,
                    &RunSession::refuseWhatCannotRun})
    if (std::optional<int> Exit = (S.*Step)())
      return *Exit;
  return S.run();
}

} // namespace collc::tool
