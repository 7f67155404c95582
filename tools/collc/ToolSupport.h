//===- tools/collc/ToolSupport.h - Shared by collc subcommands -*- C++ -*-===//
#ifndef COLLC_TOOLS_COLLC_TOOLSUPPORT_H
#define COLLC_TOOLS_COLLC_TOOLSUPPORT_H

#include "compiler/PassManager.h"
#include "plan/Plan.h"
#include "ir/Diagnostics.h"
#include "ir/Parser.h"
#include "ir/Program.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace collc::tool {

/// Exit codes of every subcommand.
enum ExitCode : int {
  ExitOk = 0,
  ExitUserError = 1, ///< the input is wrong (located diagnostics say how)
  ExitUsage = 2,     ///< the command line is wrong
  ExitInternal = 3,  ///< a bug in collc
};

/// How a subcommand reads its input program(s).
struct InputOptions {
  std::string Path;
  bool SplitInputFile = false;
  bool VerifyDiagnostics = false;
  bool VerifyRoundTrip = false;
  ParseOptions Parse;
};

/// Parses every case of the input. For each program that parses, calls
/// \p Fn with the program and a diagnostics engine. With
/// VerifyDiagnostics, success means the diagnostics of every case matched
/// the `expected-*` comments, and nothing is printed for them. Returns the
/// exit code.
int forEachProgram(const InputOptions &In,
                   llvm::function_ref<llvm::Error(Program &, DiagnosticEngine &)> Fn);

/// print(parse(print(P))) == print(P), or an internal error naming the first
/// line that differs.
llvm::Error checkRoundTrip(const Program &P);

/// True when the environment asks every tool run to check round trips
/// (COLLC_VERIFY_ROUNDTRIP=1, set by the golden test suite).
bool roundTripRequestedByEnvironment();

/// One error message for stderr, "<tool>: error: ...", written with a single
/// write when the statement ends: the ranks under a launcher share one stderr,
/// and a message written piecewise interleaves with another rank's.
class ErrorLine {
public:
  explicit ErrorLine(llvm::StringRef Tool);
  ~ErrorLine();
  ErrorLine(const ErrorLine &) = delete;
  ErrorLine &operator=(const ErrorLine &) = delete;

  template <typename T> ErrorLine &operator<<(const T &Value) {
    OS << Value;
    return *this;
  }

private:
  std::string Text;
  llvm::raw_string_ostream OS;
};

/// Reports \p E to stderr as "collc <cmd>: error: ..." and returns the
/// matching exit code (internal errors give ExitInternal).
int reportError(llvm::StringRef Command, llvm::Error E);

/// Options every subcommand that reads IR takes, bound to \p Sub.
struct CommonInputFlags {
  llvm::cl::opt<std::string> Input;
  llvm::cl::opt<bool> Split;
  llvm::cl::opt<bool> VerifyDiags;
  llvm::cl::opt<bool> RoundTrip;
  explicit CommonInputFlags(llvm::cl::SubCommand &Sub);
  InputOptions get() const;
};

/// The pass-manager instrumentation flags, bound to \p Sub.
struct PassFlags {
  llvm::cl::opt<bool> PrintAfterAll, PrintAfterChange, VerifyEach, TimePasses, Stats;
  explicit PassFlags(llvm::cl::SubCommand &Sub);
  PassManagerOptions get() const;
};

/// A command's input, read once (so that "-", stdin, works like a file):
/// a plan (it starts with "collc-plan") or a program.
struct CommandInput {
  std::string Name;
  std::unique_ptr<llvm::MemoryBuffer> Buffer;
  llvm::StringRef text() const { return Buffer->getBuffer(); }
  bool isPlan() const { return text().startswith("collc-plan"); }
};
llvm::Expected<CommandInput> readCommandInput(llvm::StringRef Path);

/// Reads a plan, or compiles a program with the default pipeline, so that
/// commands that explain plans also take programs.
llvm::Expected<plan::Plan> loadOrCompilePlan(const CommandInput &In, llvm::StringRef BucketPolicy);
/// Reads command \p Command's input \p Path (readCommandInput), refusing a
/// --bucket (\p Bucket) given for a plan, whose buckets are fixed: it would
/// be ignored. On failure, says why as "collc <Command>" and sets \p Exit
/// (ExitUsage for the flag).
std::optional<CommandInput> readBucketedInput(llvm::StringRef Command, llvm::StringRef Path,
                                              const llvm::cl::Option &Bucket, int &Exit);
llvm::Expected<plan::Plan> loadOrCompilePlan(llvm::StringRef Path, llvm::StringRef BucketPolicy);

/// The one way commands compile a program they were given instead of a plan:
/// the default pipeline with \p BucketPolicy (see bucketPassFor).
llvm::Expected<plan::Plan> compileWithBucketPolicy(Program &P, DiagnosticEngine &Diags,
                                                   llvm::StringRef BucketPolicy);

} // namespace collc::tool

#endif // COLLC_TOOLS_COLLC_TOOLSUPPORT_H
