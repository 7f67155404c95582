//===- tools/collc/ToolSupport.cpp - Shared by collc subcommands -------===//

#include "ToolSupport.h"

#include "compiler/Compile.h"
#include "ir/InputFile.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "tools/collc/SourceChunks.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

namespace collc::tool {

CommonInputFlags::CommonInputFlags(cl::SubCommand &Sub)
    // Optional, stdin by default, as LLVM's tools: so that flags that read
    // no input (`collc opt --list-passes`) need none.
    : Input(cl::Positional, cl::desc("<input .coll file, or - for stdin (the default)>"),
            cl::init("-"), cl::sub(Sub)),
      Split("split-input-file",
            cl::desc("Treat each `// -----` separated part of the input as its own program"),
            cl::sub(Sub)),
      VerifyDiags("verify-diagnostics",
                  cl::desc("Check diagnostics against expected-error {{...}} comments"),
                  cl::sub(Sub)),
      RoundTrip("verify-roundtrip",
                cl::desc("Check that print(parse(print(x))) == print(x) for every program"),
                cl::sub(Sub)) {}

InputOptions CommonInputFlags::get() const {
  InputOptions In;
  In.Path = Input;
  In.SplitInputFile = Split;
  In.VerifyDiagnostics = VerifyDiags;
  In.VerifyRoundTrip = RoundTrip || roundTripRequestedByEnvironment();
  return In;
}

bool roundTripRequestedByEnvironment() {
  Optional<std::string> V = sys::Process::GetEnv("COLLC_VERIFY_ROUNDTRIP");
  return V && *V != "" && *V != "0";
}

Error checkRoundTrip(const Program &P) {
  std::string First = printProgram(P);
  Expected<ParsedProgram> Again = parseProgramText(First, "<round-trip>");
  if (!Again)
    return createStringError(inconvertibleErrorCode(),
                             "internal error: round-trip check: the printed IR does not parse:\n%s",
                             toString(Again.takeError()).c_str());
  std::string Second = printProgram(*Again->Prog);
  if (First == Second)
    return Error::success();
  SmallVector<StringRef, 0> A, B;
  StringRef(First).split(A, '\n');
  StringRef(Second).split(B, '\n');
  size_t I = 0;
  while (I < A.size() && I < B.size() && A[I] == B[I])
    ++I;
  return createStringError(inconvertibleErrorCode(),
                           "internal error: round-trip check: line %zu differs:\n  first:  %s\n  "
                           "second: %s",
                           I + 1, I < A.size() ? A[I].str().c_str() : "<end>",
                           I < B.size() ? B[I].str().c_str() : "<end>");
}

ErrorLine::ErrorLine(StringRef Tool) : OS(Text) { WithColor::error(OS, Tool); }

ErrorLine::~ErrorLine() {
  OS.flush();
  // Unbuffered, so this is one write(2) of the whole message.
  errs() << Text;
}

int reportError(StringRef Command, Error E) {
  std::string Msg = toString(std::move(E));
  bool Internal = StringRef(Msg).startswith("internal error");
  ErrorLine(("collc " + Command).str()) << Msg << '\n';
  return Internal ? ExitInternal : ExitUserError;
}

int forEachProgram(const InputOptions &In, function_ref<Error(Program &, DiagnosticEngine &)> Fn) {
  SourceMgr SM;
  Expected<std::vector<SourceChunk>> Chunks = loadSourceChunks(In.Path, In.SplitInputFile, SM);
  if (!Chunks) {
    ErrorLine("collc") << toString(Chunks.takeError()) << '\n';
    return ExitUserError;
  }
  int Exit = ExitOk;
  for (const SourceChunk &Chunk : *Chunks) {
    DiagnosticEngine Diags(&SM);
    if (!In.VerifyDiagnostics)
      Diags.setStream(&errs());
    auto Process = [&]() -> Error {
      Expected<std::unique_ptr<Program>> P =
          parseProgram(SM, Chunk.Buffer, Diags, In.Parse, Chunk.Text);
      if (!P)
        return P.takeError();
      if (In.VerifyRoundTrip)
        if (Error E = checkRoundTrip(**P))
          return E;
      return Fn(**P, Diags);
    };
    Error Failure = Process();
    if (In.VerifyDiagnostics) {
      // Failures are expected here; what matters is that the diagnostics
      // match. An error without any diagnostic is still a failure.
      std::string Msg = Failure ? toString(std::move(Failure)) : "";
      if (!Msg.empty() && Diags.diagnostics().empty()) {
        ErrorLine("collc") << Msg << '\n';
        Exit = StringRef(Msg).startswith("internal error") ? ExitInternal : ExitUserError;
        continue;
      }
      if (Error E = Diags.verifyExpected(Chunk.Buffer, Chunk.Text)) {
        ErrorLine("collc") << "diagnostics do not match the expectations:\n"
                                          << toString(std::move(E));
        Exit = ExitUserError;
      }
      continue;
    }
    if (Failure) {
      std::string Msg = toString(std::move(Failure));
      // Located diagnostics were already printed as they arrived; print
      // only what they did not say.
      if (Diags.diagnostics().empty() || StringRef(Msg).startswith("internal error"))
        ErrorLine("collc") << Msg << '\n';
      int Code = StringRef(Msg).startswith("internal error") ? ExitInternal : ExitUserError;
      Exit = std::max(Exit, Code);
    }
  }
  return Exit;
}

PassFlags::PassFlags(cl::SubCommand &Sub)
    : PrintAfterAll("print-ir-after-all", cl::desc("Print the IR after each pass"), cl::sub(Sub)),
      PrintAfterChange("print-ir-after-change",
                       cl::desc("Print the IR after each pass that changed it"), cl::sub(Sub)),
      VerifyEach("verify-each", cl::desc("Run the verifier after every pass"), cl::sub(Sub)),
      TimePasses("time-passes", cl::desc("Time each pass"), cl::sub(Sub)),
      Stats("stats", cl::desc("Print the statistics of each pass"), cl::sub(Sub)) {}

PassManagerOptions PassFlags::get() const {
  PassManagerOptions O;
  O.PrintAfterAll = PrintAfterAll;
  O.PrintAfterChange = PrintAfterChange;
  O.VerifyEach = VerifyEach;
  O.TimePasses = TimePasses;
  return O;
}

Expected<CommandInput> readCommandInput(StringRef Path) {
  Expected<std::unique_ptr<MemoryBuffer>> Buf = readInputFile(Path, "");
  if (!Buf)
    return Buf.takeError();
  return CommandInput{Path == "-" ? std::string("<stdin>") : Path.str(), std::move(*Buf)};
}

Expected<plan::Plan> loadOrCompilePlan(const CommandInput &In, StringRef BucketPolicy) {
  if (In.isPlan())
    return plan::readPlan(In.text(), In.Name);
  Expected<ParsedProgram> P = parseProgramText(In.text(), In.Name);
  if (!P)
    return P.takeError();
  DiagnosticEngine Diags(P->Source.get());
  return compileWithBucketPolicy(*P->Prog, Diags, BucketPolicy);
}

std::optional<CommandInput> readBucketedInput(StringRef Command, StringRef Path,
                                              const cl::Option &Bucket, int &Exit) {
  Expected<CommandInput> In = readCommandInput(Path);
  if (!In) {
    Exit = reportError(Command, In.takeError());
    return std::nullopt;
  }
  if (In->isPlan() && Bucket.getNumOccurrences()) {
    ErrorLine(("collc " + Command).str())
        << "--" << Bucket.ArgStr << " applies to programs; the buckets of plan '" << In->Name
        << "' are fixed: give its program, or compile it with the policy\n";
    Exit = ExitUsage;
    return std::nullopt;
  }
  return std::move(*In);
}

Expected<plan::Plan> loadOrCompilePlan(StringRef Path, StringRef BucketPolicy) {
  Expected<CommandInput> In = readCommandInput(Path);
  if (!In)
    return In.takeError();
  return loadOrCompilePlan(*In, BucketPolicy);
}

Expected<plan::Plan> compileWithBucketPolicy(Program &P, DiagnosticEngine &Diags,
                                             StringRef BucketPolicy) {
  Expected<std::string> Bucket = bucketPassFor(BucketPolicy);
  if (!Bucket)
    return Bucket.takeError();
  CompileOptions Opts;
  Opts.Pipeline = defaultPipeline(*Bucket);
  Opts.PM.CheckUnchanged = false;
  return compileProgram(P, Opts, Diags, errs());
}

} // namespace collc::tool
