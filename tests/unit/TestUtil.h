//===- tests/unit/TestUtil.h - Helpers for the unit tests -------*- C++ -*-===//
//
// The unit tests' setup, written once: the committed examples, and parsing,
// compiling and simulating that fail the test with the error (and give an
// empty result) instead of returning it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_UNIT_TESTUTIL_H
#define COLLC_TESTS_UNIT_TESTUTIL_H

#include "compiler/Compile.h"
#include "plan/analysis/PlanStepModel.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

namespace collc::test {

/// Every examples/*.coll, sorted (directory order is the file system's);
/// fails the test if the directory cannot be read or holds fewer than the
/// four committed examples.
inline std::vector<std::string> exampleFiles() {
  std::vector<std::string> Out;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(COLLC_EXAMPLES_DIR, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::sys::path::extension(It->path()) == ".coll")
      Out.push_back(It->path());
  EXPECT_FALSE(EC) << COLLC_EXAMPLES_DIR << ": " << EC.message();
  EXPECT_GE(Out.size(), 4u) << COLLC_EXAMPLES_DIR << ": expected the four committed examples";
  llvm::sort(Out);
  return Out;
}

/// The path of examples/\p Name.coll.
inline std::string examplePath(llvm::StringRef Name) {
  return (COLLC_EXAMPLES_DIR "/" + Name + ".coll").str();
}

/// The text of the file at \p Path, failing the test (naming the file) if it
/// cannot be read; then "".
inline std::string readOK(llvm::StringRef Path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buf = llvm::MemoryBuffer::getFile(Path);
  if (!Buf) {
    ADD_FAILURE() << Path.str() << ": " << Buf.getError().message();
    return "";
  }
  return (*Buf)->getBuffer().str();
}

/// Parses \p Text (named \p Name in diagnostics), failing the test (with the
/// diagnostics) if it does not; then Prog is null.
inline ParsedProgram parseOK(llvm::StringRef Text, llvm::StringRef Name = "test.coll") {
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, Name);
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  return std::move(*P);
}

/// Compiles \p Text (named \p Name in diagnostics) with \p Pipeline (empty:
/// the default pipeline), failing the test (with the error) if it does not;
/// then the plan is empty, its Digest "".
/// One broadcast written as two ops (rank 0 through %w, ranks 1-3 through
/// %buf, issue 35), and an all_reduce whose waits the ranks run in their own
/// places: a joint comm and steps that name their ranks.
inline const char *JointProgram = R"(program @j world(4) {
  group @dp = world
  %w = compute @load : f32[64] when rank == 0
  %buf = compute @empty : f32[64] when rank != 0
  %a = broadcast %w root 2 in @dp when rank == 0
  %b = broadcast %buf root 2 in @dp when rank != 0
  %g = compute @grad : f32[32]
  %r = all_reduce async sum %g in @dp
  wait %r when rank != 0
  wait %r when rank == 0
  compute @early(%r) when rank == 0
  compute @use(%a, %r) when rank == 0
  compute @use2(%b, %r) when rank != 0
}
)";

inline plan::Plan compileOK(llvm::StringRef Text, llvm::StringRef Pipeline = "",
                            llvm::StringRef Name = "test.coll") {
  llvm::Expected<plan::Plan> P = compileProgramText(Text, Pipeline, Name);
  if (!P) {
    ADD_FAILURE() << Name.str() << ": " << llvm::toString(P.takeError());
    return {};
  }
  return std::move(*P);
}

/// One simulated step of \p P on \p Link, failing the test (with the error)
/// if the simulator refuses it; then every figure is 0.
inline SimResult simulateOK(const plan::Plan &P, const LinkClass &Link) {
  SimOptions Opts;
  Opts.Link = Link;
  llvm::Expected<SimResult> R = simulatePlan(P, Opts);
  if (!R) {
    ADD_FAILURE() << "simulating on " << Link.Name.str() << ": " << llvm::toString(R.takeError());
    return {};
  }
  return std::move(*R);
}

/// The rendered diagnostics of parsing and then verifying \p Text ("" when
/// both succeed).
inline std::string diagnose(llvm::StringRef Text) {
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, "test.coll");
  if (!P)
    return llvm::toString(P.takeError());
  DiagnosticEngine Diags(P->Source.get());
  if (llvm::Error E = verifyProgram(*P->Prog, Diags))
    return llvm::toString(std::move(E));
  return "";
}

} // namespace collc::test

#endif
