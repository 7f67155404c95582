//===- tests/fuzz/PipelineFuzzer.cpp - Programs through check, compile, run -===//
//
// A structure-aware fuzzer of whole programs. Its mutator edits program text
// as a person attacking the compiler would: a number becomes 0, 1, 2, 2^31,
// 2^48, 2^63-1 or a negative; a line is duplicated or deleted; two lines
// swap; otherwise libFuzzer's own byte mutations. Every input goes through
// what `collc check`, `collc compile` and a small `collc run` do:
//  - parse and verify; a program that fails says so with a diagnostic;
//  - the default pipeline and the lowering; the plan reads back equal;
//  - for worlds of at most 4 ranks and at most 64 KiB communicated per rank,
//    one step on local ranks, every result checked against the reference.
// Nothing may crash, hang, leak or trip a sanitizer, and a compiled program
// must run: the compiler checks what the runtime relies on (issue 13: no
// class of failure is excused).
// With COLLC_FUZZ_STATS=1 the fuzzer says at exit how many inputs reached
// each phase and the time spent in each. Long run: see docs/testing.md.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "ir/Parser.h"
#include "tools/collc/LocalRun.h"
#include "compiler/Shrink.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace collc;

namespace {

// What is worth running: every path of the local runtime is taken from 1 KiB
// up (its thresholds are 32 B mailboxes, 1 KiB inline and 8 MiB streaming,
// runtime/local), so 64 KiB per rank reaches all that 1 MiB did, at a
// sixteenth of the memory to fill and check.
constexpr int64_t MaxRunWorld = 4;
constexpr uint64_t MaxRunBytesPerRank = uint64_t(64) << 10;

/// How far inputs get and where the time goes (printed at exit when
/// COLLC_FUZZ_STATS is set), to keep the fuzzer fast enough to run long.
struct Stats {
  enum Phase { Parse, Compile, Run, Check, NumPhases };
  static constexpr const char *Names[NumPhases] = {"parse+verify", "compile+read back", "run",
                                                   "check"};
  uint64_t Reached[NumPhases] = {};
  double Seconds[NumPhases] = {};
  uint64_t Inputs = 0;
  ~Stats() {
    if (!getenv("COLLC_FUZZ_STATS"))
      return;
    fprintf(stderr, "pipeline fuzzer: %llu inputs\n", (unsigned long long)Inputs);
    for (int I = 0; I != NumPhases; ++I)
      fprintf(stderr, "  %-18s %10llu inputs %9.3f s %8.1f us each\n", Names[I],
              (unsigned long long)Reached[I], Seconds[I],
              Reached[I] ? 1e6 * Seconds[I] / double(Reached[I]) : 0.0);
  }
} TheStats;

/// Times one phase of one input from construction to destruction.
class PhaseTimer {
public:
  explicit PhaseTimer(Stats::Phase P) : P(P), Start(std::chrono::steady_clock::now()) {
    ++TheStats.Reached[P];
  }
  ~PhaseTimer() {
    TheStats.Seconds[P] +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  }

private:
  Stats::Phase P;
  std::chrono::steady_clock::time_point Start;
};

[[noreturn]] void fail(const char *What, const std::string &Detail) {
  fprintf(stderr, "%s\n%s\n", What, Detail.c_str());
  abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  ++TheStats.Inputs;
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  llvm::Optional<llvm::Expected<ParsedProgram>> P;
  {
    PhaseTimer T(Stats::Parse);
    P.emplace(parseProgramText(Text, "fuzz.coll"));
  }
  if (!*P) {
    llvm::consumeError(P->takeError());
    return 0;
  }
  ParsedProgram &Prog = **P;
  llvm::Optional<llvm::Expected<plan::Plan>> Plan;
  {
    PhaseTimer T(Stats::Compile);
    DiagnosticEngine Diags(Prog.Source.get());
    CompileOptions Opts;
    Opts.PM.CheckUnchanged = false;
    Plan.emplace(compileProgram(*Prog.Prog, Opts, Diags, llvm::nulls()));
    if (!*Plan) {
      llvm::consumeError(Plan->takeError());
      return 0;
    }
    llvm::Expected<plan::Plan> Back = plan::readPlan(plan::writePlan(**Plan), "fuzz.plan");
    if (!Back)
      fail("a compiled plan does not read back:", llvm::toString(Back.takeError()));
    if (!(*Back == **Plan))
      fail("a compiled plan reads back different:", plan::writePlan(**Plan));
  }
  const plan::Plan &Compiled = **Plan;
  if (Compiled.World > MaxRunWorld || communicatedBytesPerRank(*Prog.Prog) > MaxRunBytesPerRank)
    return 0;
  rt::ExecutorOptions RunOpts;
  // One prefix for every run: the local driver remembers each group name for
  // the life of the process, and a fresh prefix per run would grow that
  // table without bound (and make every run look like a leak to libFuzzer,
  // which would then run each input twice with a leak check).
  RunOpts.CommPrefix = "fuzzrun";
  // A run takes milliseconds, but a long campaign runs niced on a shared
  // machine, where a starved process saw a minute pass in one input; only a
  // real deadlock may time out. (libFuzzer's -timeout must be longer still,
  // so that a deadlock fails here, naming the rank that waits.)
  RunOpts.Timeout = std::chrono::minutes(5);
  llvm::Optional<tool::LocalRun> Run;
  {
    PhaseTimer T(Stats::Run);
    Run.emplace(tool::runOnLocalRanks(Compiled, RunOpts, 1));
  }
  for (const tool::LocalRun::Rank &R : Run->Ranks)
    if (!R.Error.empty())
      fail("a compiled program does not run:", R.Error + "\n--- program:\n" + Text.str());
  PhaseTimer T(Stats::Check);
  llvm::Expected<rt::CheckSummary> Check = tool::checkLocalRun(Compiled, *Run);
  if (!Check)
    fail("a compiled program computes a wrong result:",
         llvm::toString(Check.takeError()) + "\n--- program:\n" + Text.str());
  return 0;
}

#ifdef COLLC_FUZZ_MUTATOR
extern "C" size_t LLVMFuzzerMutate(uint8_t *Data, size_t Size, size_t MaxSize);

/// Program-shaped mutations; a third of the time, libFuzzer's own.
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *Data, size_t Size, size_t MaxSize,
                                          unsigned Seed) {
  std::minstd_rand Rng(Seed);
  std::string Text(reinterpret_cast<const char *>(Data), Size);
  llvm::SmallVector<llvm::StringRef, 64> Lines;
  llvm::StringRef(Text).split(Lines, '\n');
  std::string Out;
  switch (Rng() % 6) {
  case 0:
  case 1: { // a number becomes an edge value
    static const char *Edges[] = {"0",          "1",          "2",  "2147483648", "281474976710656",
                                  "9223372036854775807", "-1", "-9223372036854775808"};
    llvm::SmallVector<std::pair<size_t, size_t>, 32> Numbers;
    for (size_t I = 0; I < Text.size();) {
      if (!isdigit(uint8_t(Text[I]))) {
        ++I;
        continue;
      }
      size_t J = I;
      while (J < Text.size() && isdigit(uint8_t(Text[J])))
        ++J;
      Numbers.push_back({I, J - I});
      I = J;
    }
    if (Numbers.empty())
      break;
    auto [At, Len] = Numbers[Rng() % Numbers.size()];
    Out = Text.substr(0, At) + Edges[Rng() % std::size(Edges)] + Text.substr(At + Len);
    break;
  }
  case 2: // a line twice
  case 3: // a line gone
  case 4: { // two lines swapped
    if (Lines.size() < 3)
      break;
    size_t A = 1 + Rng() % (Lines.size() - 2), B = 1 + Rng() % (Lines.size() - 2);
    int Kind = int(Rng() % 3);
    for (size_t I = 0; I != Lines.size(); ++I) {
      llvm::StringRef L = Lines[I];
      if (Kind == 2 && I == A)
        L = Lines[B];
      else if (Kind == 2 && I == B)
        L = Lines[A];
      if (Kind == 1 && I == A)
        continue;
      Out += L.str() + "\n";
      if (Kind == 0 && I == A)
        Out += L.str() + "\n";
    }
    break;
  }
  default:
    break;
  }
  if (Out.empty() || Out.size() > MaxSize)
    return LLVMFuzzerMutate(Data, Size, MaxSize);
  memcpy(Data, Out.data(), Out.size());
  return Out.size();
}
#endif
