//===- tests/fuzz/PipelineFuzzer.cpp - Programs through check, compile, run -===//
//
// A structure-aware fuzzer of whole programs. Its mutator edits program text
// as a person attacking the compiler would: a number becomes 0, 1, 2, 2^31,
// 2^48, 2^63-1 or a negative; a line is duplicated or deleted; two lines
// swap; otherwise libFuzzer's own byte mutations. Every input goes through
// what `collc check`, `collc compile` and a small `collc run` do:
//  - parse and verify; a program that fails says so with a diagnostic;
//  - the default pipeline and the lowering; the plan reads back equal;
//  - for worlds of at most 4 ranks and at most 1 MiB communicated per rank,
//    one step on local ranks, every result checked against the reference.
// Nothing may crash, hang or trip a sanitizer, and a compiled program must
// run: the compiler checks what the runtime relies on.
// Long run: see docs/testing.md.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "ir/Parser.h"
#include "tools/collc/LocalRun.h"
#include "tools/collc/Shrink.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace collc;

namespace {

constexpr int64_t MaxRunWorld = 4;
constexpr uint64_t MaxRunBytesPerRank = uint64_t(1) << 20;

[[noreturn]] void fail(const char *What, const std::string &Detail) {
  fprintf(stderr, "%s\n%s\n", What, Detail.c_str());
  abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, "fuzz.coll");
  if (!P) {
    llvm::consumeError(P.takeError());
    return 0;
  }
  DiagnosticEngine Diags(P->Source.get());
  CompileOptions Opts;
  Opts.PM.CheckUnchanged = false;
  llvm::Expected<plan::Plan> Plan = compileProgram(*P->Prog, Opts, Diags, llvm::nulls());
  if (!Plan) {
    llvm::consumeError(Plan.takeError());
    return 0;
  }
  llvm::Expected<plan::Plan> Back = plan::readPlan(plan::writePlan(*Plan), "fuzz.plan");
  if (!Back)
    fail("a compiled plan does not read back:", llvm::toString(Back.takeError()));
  if (!(*Back == *Plan))
    fail("a compiled plan reads back different:", plan::writePlan(*Plan));
  if (Plan->World > MaxRunWorld || communicatedBytesPerRank(*P->Prog) > MaxRunBytesPerRank)
    return 0;
  static std::atomic<unsigned> Runs{0};
  rt::ExecutorOptions RunOpts;
  RunOpts.CommPrefix = llvm::formatv("fuzzrun{0}", Runs++).str();
  RunOpts.Timeout = std::chrono::milliseconds(20000);
  tool::LocalRun Run = tool::runOnLocalRanks(*Plan, RunOpts, 1);
  for (const tool::LocalRun::Rank &R : Run.Ranks)
    if (!R.Error.empty())
      fail("a compiled program does not run:", R.Error + "\n--- program:\n" + Text.str());
  llvm::Expected<rt::CheckSummary> Check = tool::checkLocalRun(*Plan, Run);
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
