//===- tests/property/AgreementProperty.cpp - Compile accepts only what runs -===//
//
// The property of issue 13, over generated programs (ProgramGenerator.h):
// for every world size from 2 to 8,
//  - compile accepts  =>  the plan runs on local ranks (a thread each) and
//    every result on every rank verifies against the reference;
//  - compile refuses  =>  with a located error (file:line:col);
// and of the NCCL lowering's stream-order check (runtime/nccl/
// StreamOrderCheck.h), which refuses plans whose ranks' in-order comm
// streams would wait for each other:
//  - it refuses only plans with an async send or recv (without one, NCCL's
//    issue order is the program's own, which compile checked), and then
//    names a cycle or a missing partner and the program line of a comm.
// A violation prints the program and what went wrong, and exits 1.
//
//   collc_agreement_property [--programs N] [--seed S] [--show]
//
// N shapes from seed S (default 300 from 1: the ctest, well under a minute);
// the long run is --programs 10000 (docs/testing.md). At the end it prints
// how many instances compiled and verified and how many were refused, by
// the pass or stage that refused them, so a generator that stopped
// reaching the runtime shows.
//
//===----------------------------------------------------------------------===//

#include "ProgramGenerator.h"

#include "compiler/Compile.h"
#include "ir/Parser.h"
#include "runtime/nccl/StreamOrderCheck.h"
#include "tools/collc/LocalRun.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

using namespace collc;
using namespace llvm;

namespace {

constexpr const char *BufferName = "prop.coll";

struct Tally {
  uint64_t Instances = 0, Verified = 0, Refused = 0;
  /// Verified plans with an async send/recv, and those the NCCL stream
  /// order refuses.
  uint64_t AsyncP2P = 0, NcclRefused = 0;
  std::map<std::string, uint64_t> RefusedBy; ///< ordered: the report is stable
};

/// Which pass or stage an error comes from, for the tally: the pass the
/// diagnostics engine names first ("check-cross-rank failed with 1 error"),
/// or the lowering, whose messages start with the location.
std::string stageOf(StringRef Msg) {
  if (Msg.startswith(BufferName))
    return "lowering";
  return Msg.take_until([](char C) { return C == ' ' || C == ':' || C == '\n'; }).str();
}

bool violation(const std::string &Program, const Twine &What) {
  errs() << "PROPERTY VIOLATED: " << What << "\n--- program:\n" << Program;
  return false;
}

/// The NCCL side of the property, for a plan compile accepted.
bool checkStreamOrderOf(const plan::Plan &P, const std::string &Text, Tally &T, bool Show) {
  bool Async = llvm::any_of(P.Comms, [](const plan::Comm &C) {
    return (C.Kind == plan::CommKind::Send || C.Kind == plan::CommKind::Recv) && C.Async &&
           C.Batch < 0;
  });
  T.AsyncP2P += Async;
  Error E = rt::nccl::checkStreamOrder(P);
  if (!E)
    return true;
  std::string Msg = toString(std::move(E));
  if (!Async)
    return violation(Text, "compiled without an async send or recv, but the NCCL stream order "
                           "refuses it: " + Msg);
  static const Regex Named(std::string("(cycle [0-9 >-]+|issues no more calls).*comm #[0-9]+ "
                                       "\\([a-z_]+.* at ") +
                           BufferName + ":[0-9]+:[0-9]+\\)");
  if (!Named.match(Msg))
    return violation(Text, "the NCCL stream order refuses it without naming the cycle and a "
                           "comm's place: " + Msg);
  ++T.NcclRefused;
  if (Show)
    outs() << "refused on NCCL: " << Msg << "\n";
  return true;
}

/// Checks one program text; false on a violation (already reported).
bool checkInstance(const std::string &Text, int64_t World, Tally &T, bool Show) {
  ++T.Instances;
  // Located: a line of the message that starts with a place in the file.
  static const Regex Located(std::string("(^|\n)") + BufferName + ":[0-9]+:[0-9]+: error: ");
  Expected<ParsedProgram> Parsed = parseProgramText(Text, BufferName);
  if (!Parsed) {
    // The parser infers types, so some refusals (a group of uneven
    // subgroups for an all_to_all) come from it: `collc compile` parses too.
    std::string Msg = toString(Parsed.takeError());
    if (!Located.match(Msg))
      return violation(Text, "refused by the parser without a location: " + Msg);
    ++T.Refused;
    ++T.RefusedBy["parse"];
    if (Show)
      outs() << "refused at world " << World << ": " << Msg << "\n";
    return true;
  }
  std::string Rendered;
  raw_string_ostream DiagOS(Rendered);
  DiagnosticEngine Diags(Parsed->Source.get());
  Diags.setStream(&DiagOS);
  CompileOptions Opts;
  Opts.PM.CheckUnchanged = false; // the pass manager's own check; not this property
  Expected<plan::Plan> Plan = compileProgram(*Parsed->Prog, Opts, Diags, nulls());
  if (!Plan) {
    std::string Msg = toString(Plan.takeError());
    // Located: a diagnostic at a place in the file, or a message that
    // starts with one (the lowering's refusals).
    bool HasLocatedDiag = false;
    for (const Diagnostic &D : Diags.diagnostics())
      HasLocatedDiag |= D.Kind == Severity::Error && D.Loc.isValid();
    if (!HasLocatedDiag && !Located.match(Msg) &&
        !Regex(std::string("^") + BufferName + ":[0-9]+:[0-9]+: ").match(Msg))
      return violation(Text, "refused without a location: " + Msg + "\n" + Rendered);
    ++T.Refused;
    ++T.RefusedBy[stageOf(Msg)];
    if (Show)
      outs() << "refused at world " << World << ": " << Rendered << Msg << "\n";
    return true;
  }
  rt::ExecutorOptions RunOpts;
  // Group ids are remembered by the local driver for the life of the
  // process: one prefix per world size keeps that table small.
  RunOpts.CommPrefix = "prop" + std::to_string(World);
  // A deadlock must fail, not hang the suite.
  RunOpts.Timeout = std::chrono::seconds(60);
  tool::LocalRun Run = tool::runOnLocalRanks(*Plan, RunOpts, 1);
  for (size_t R = 0; R != Run.Ranks.size(); ++R)
    if (!Run.Ranks[R].Error.empty())
      return violation(Text, "compiled, but rank " + Twine(R) +
                                 " does not run: " + Run.Ranks[R].Error);
  Expected<rt::CheckSummary> Check = tool::checkLocalRun(*Plan, Run);
  if (!Check)
    return violation(Text, "compiled and ran, but does not verify: " + toString(Check.takeError()));
  ++T.Verified;
  if (Show)
    outs() << "verified at world " << World << "\n";
  return checkStreamOrderOf(*Plan, Text, T, Show);
}

} // namespace

int main(int argc, char **argv) {
  uint64_t Programs = 300, Seed = 1;
  bool Show = false;
  for (int I = 1; I < argc; ++I) {
    StringRef A = argv[I];
    if (A == "--show") {
      Show = true;
    } else if ((A == "--programs" || A == "--seed") && I + 1 < argc) {
      uint64_t V;
      if (StringRef(argv[++I]).getAsInteger(10, V)) {
        errs() << "collc_agreement_property: " << A << " takes a number, not '" << argv[I]
               << "'\n";
        return 2;
      }
      (A == "--programs" ? Programs : Seed) = V;
    } else {
      errs() << "usage: collc_agreement_property [--programs N] [--seed S] [--show]\n";
      return 2;
    }
  }
  Tally T;
  auto Start = std::chrono::steady_clock::now();
  for (uint64_t K = 0; K != Programs; ++K) {
    property::ProgramShape Shape = property::ProgramShape::generate(Seed + K);
    for (int64_t World = 2; World <= 8; ++World) {
      std::string Text = Shape.text(World);
      if (Show)
        outs() << Text;
      if (!checkInstance(Text, World, T, Show)) {
        errs() << "(seed " << Seed + K << ", world " << World << ")\n";
        return 1;
      }
    }
  }
  double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  outs() << Programs << " programs from seed " << Seed << ", worlds 2..8: " << T.Instances
         << " instances, " << T.Verified << " compiled, ran and verified, " << T.Refused
         << " refused with a location (";
  bool First = true;
  for (auto &[Stage, N] : T.RefusedBy) {
    outs() << (First ? "" : ", ") << Stage << " " << N;
    First = false;
  }
  outs() << ") in " << format("%.1f", Seconds) << " s\n";
  outs() << "NCCL stream order: of " << T.AsyncP2P << " verified plans with an async send or "
         << "recv, " << T.NcclRefused << " refused (the others and every plan without one "
         << "accepted)\n";
  // A generator that no longer reaches the runtime would pass vacuously.
  if (T.Verified * 4 < T.Instances) {
    errs() << "too few programs verified (" << T.Verified << " of " << T.Instances
           << "): the generator no longer exercises the runtime\n";
    return 1;
  }
  return 0;
}
