//===- tools/collc/OptCommand.cpp - collc opt --------------------------===//
//
// collc opt FILE --passes=a,b{k=v}: text IR in, text IR out.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"
#include "plan/OutputFile.h"

#include "compiler/PassManager.h"
#include "tools/collc/SourceChunks.h"
#include "ir/Printer.h"

#include "llvm/Support/FileSystem.h"

using namespace llvm;

namespace collc::tool {

static cl::SubCommand Cmd("opt", "Run a pipeline of passes: text IR in, text IR out");
static CommonInputFlags Flags(Cmd);
static cl::opt<std::string> Pipeline("passes",
                                     cl::desc("Comma-separated passes with options, e.g. "
                                              "verify,fuse{max-bytes=33554432}"),
                                     cl::value_desc("pipeline"), cl::sub(Cmd));
static cl::opt<std::string> Output("o", cl::desc("Output file (default: stdout)"),
                                   cl::value_desc("file"), cl::init("-"), cl::sub(Cmd));
static PassFlags Instrument(Cmd);
static cl::opt<bool> ListPasses("list-passes", cl::desc("List the registered passes and exit"),
                                cl::sub(Cmd));

cl::SubCommand &optCommand() { return Cmd; }

int run_optCommand() {
  if (ListPasses) {
    for (auto &[Name, Summary] : registeredPasses())
      outs() << "  " << Name << " - " << Summary << '\n';
    return ExitOk;
  }
  // Validate the pipeline once, before reading any input.
  if (Expected<std::vector<PassSpec>> Specs = parsePipeline(Pipeline); !Specs) {
    ErrorLine("collc opt") << toString(Specs.takeError()) << '\n';
    return ExitUsage;
  } else {
    for (const PassSpec &S : *Specs)
      if (Expected<std::unique_ptr<Pass>> P = createPass(S); !P) {
        ErrorLine("collc opt") << toString(P.takeError()) << '\n';
        return ExitUsage;
      }
  }

  // Written beside the target and renamed on success: a failure leaves the
  // old output as it was (and the input is not an output).
  Expected<std::unique_ptr<OutputFile>> Out =
      OutputFile::create(Output, {StringRef(Flags.Input.getValue())});
  if (!Out) {
    ErrorLine("collc opt") << toString(Out.takeError()) << '\n';
    return ExitUserError;
  }
  PassManagerOptions PMOpts = Instrument.get();
  InputOptions In = Flags.get();
  bool First = true;
  int Exit = forEachProgram(In, [&](Program &P, DiagnosticEngine &Diags) -> Error {
    PassManager PM(PMOpts);
    if (Error E = PM.addPipeline(Pipeline))
      return E;
    PassContext Ctx(Diags);
    // Like LLVM opt, dumps and timings go to stderr so stdout stays the IR.
    if (Error E = PM.run(P, Ctx, errs()))
      return E;
    if (In.VerifyRoundTrip)
      if (Error E = checkRoundTrip(P))
        return E;
    if (Instrument.Stats)
      for (auto &[Name, N] : Ctx.Stats)
        errs() << "  " << N << "  " << Name << '\n';
    if (In.VerifyDiagnostics)
      return Error::success();
    if (!First)
      (*Out)->os() << ChunkSeparator << '\n';
    First = false;
    printProgram(P, (*Out)->os());
    return Error::success();
  });
  if (Exit == ExitOk)
    if (Error E = (*Out)->commit()) {
      ErrorLine("collc opt") << toString(std::move(E)) << '\n';
      return ExitUserError;
    }
  return Exit;
}

} // namespace collc::tool
