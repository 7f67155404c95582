//===- tools/collc/CompileCommand.cpp - collc compile ------------------===//
//
// collc compile FILE -o PLAN [--world N] [--passes ...] [--bucket ddp|fixed:25MiB|auto|none]
//   [--memory-budget BYTES] [--prefetch N]
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"
#include "plan/OutputFile.h"

#include "compiler/Compile.h"

#include "llvm/Support/FileSystem.h"

using namespace llvm;

namespace collc::tool {

static cl::SubCommand Cmd("compile", "Compile a program to a plan");
static CommonInputFlags Flags(Cmd);
static PassFlags Instrument(Cmd);
static cl::opt<std::string> Output("o", cl::desc("The plan file (default: stdout)"),
                                   cl::value_desc("plan"), cl::init("-"), cl::sub(Cmd));
static cl::opt<int64_t> World("world",
                              cl::desc("Compile for this world size instead of the declared one"),
                              cl::init(0), cl::sub(Cmd));
static cl::opt<std::string> Pipeline("passes",
                                     cl::desc("The pass pipeline (default: the standard one, see "
                                              "docs/passes.md)"),
                                     cl::value_desc("pipeline"), cl::sub(Cmd));
static cl::opt<std::string> Bucket("bucket",
                                   cl::desc("Bucket policy: ddp (default), fixed:<bytes>, auto or "
                                            "none"),
                                   cl::init("ddp"), cl::sub(Cmd));
static cl::opt<std::string> Align("align", cl::desc("Alignment of tensors in buffers"),
                                  cl::init("256"), cl::sub(Cmd));
static cl::opt<std::string>
    MemoryBudget("memory-budget",
                 cl::desc("Peak communication memory per rank to stay within (bytes, 40GiB...): "
                          "the schedule chooses how far to prefetch gathers"),
                 cl::value_desc("bytes"), cl::sub(Cmd));
static cl::opt<unsigned> Prefetch("prefetch",
                                  cl::desc("Parameter gathers' units in flight (default 2, "
                                           "PyTorch FSDP's; 0: unbounded)"),
                                  cl::sub(Cmd));
static cl::opt<bool> NoViews("no-views",
                             cl::desc("Pack every input instead of letting the model allocate "
                                      "inside buffers"),
                             cl::sub(Cmd));

cl::SubCommand &compileCommand() { return Cmd; }

int run_compileCommand() {
  CompileOptions Opts;
  Opts.PM = Instrument.get();
  // The unchanged-IR check prints the IR around every pass; tests run it
  // through `collc opt`, and --verify-each turns it on here.
  Opts.PM.CheckUnchanged = Opts.PM.VerifyEach;
  // The layout options belong to the pipeline's plan-memory pass, the one
  // place the IR and the plan take them from.
  bool LayoutFlags = Align.getNumOccurrences() || NoViews.getNumOccurrences();
  bool ScheduleFlags = MemoryBudget.getNumOccurrences() || Prefetch.getNumOccurrences();
  if (!Pipeline.empty() && (Bucket.getNumOccurrences() || LayoutFlags || ScheduleFlags)) {
    ErrorLine("collc compile")
        << "--passes cannot be combined with "
        << (Bucket.getNumOccurrences() ? "--bucket: put the bucket pass in the pipeline"
            : LayoutFlags ? "--align or --no-views: give them to the pipeline's "
                            "plan-memory{align=N,views=false}"
                          : "--memory-budget or --prefetch: give them to the pipeline's "
                            "schedule{memory-budget=BYTES,prefetch=N}")
        << '\n';
    return ExitUsage;
  }
  uint64_t BudgetBytes = 0;
  if (MemoryBudget.getNumOccurrences()) {
    Expected<uint64_t> B = parseByteSize(MemoryBudget);
    if (!B || *B == 0) {
      if (!B)
        consumeError(B.takeError());
      ErrorLine("collc compile")
          << "--memory-budget=" << MemoryBudget << ": expected a size in bytes > 0 (40GiB)\n";
      return ExitUsage;
    }
    BudgetBytes = *B;
  }
  std::optional<unsigned> PrefetchUnits;
  if (Prefetch.getNumOccurrences())
    PrefetchUnits = Prefetch;
  Expected<std::string> BucketPass = bucketPassFor(Bucket, BudgetBytes);
  if (!BucketPass) {
    ErrorLine("collc compile") << toString(BucketPass.takeError()) << '\n';
    return ExitUsage;
  }
  Expected<uint64_t> AlignBytes = parseByteSize(Align);
  if (!AlignBytes || *AlignBytes == 0 || (*AlignBytes & (*AlignBytes - 1))) {
    if (!AlignBytes)
      consumeError(AlignBytes.takeError());
    ErrorLine("collc compile")
        << "--align=" << Align << ": expected a power of two\n";
    return ExitUsage;
  }
  std::string PlanMemoryPass = "plan-memory";
  if (LayoutFlags)
    PlanMemoryPass += "{align=" + std::to_string(*AlignBytes) +
                      ",views=" + (NoViews ? "false" : "true") + "}";
  Opts.Pipeline =
      Pipeline.empty()
          ? defaultPipeline(*BucketPass, PlanMemoryPass, schedulePassFor(BudgetBytes, PrefetchUnits))
          : std::string(Pipeline);
  if (Error E = PassManager().addPipeline(Opts.Pipeline)) {
    ErrorLine("collc compile") << toString(std::move(E)) << '\n';
    return ExitUsage;
  }
  // 0 is the default's value: given, it is a mistake, not "the declared one".
  if ((World.getNumOccurrences() && World < 1) || World > MaxWorldSize) {
    ErrorLine("collc compile")
        << "--world=" << World << " is not in 1.." << MaxWorldSize << '\n';
    return ExitUsage;
  }
  if (Bucket.getNumOccurrences())
    Opts.Notes.push_back("bucket: " + Bucket);
  if (BudgetBytes)
    Opts.Notes.push_back("memory budget: " + std::to_string(BudgetBytes) + " bytes");

  InputOptions In = Flags.get();
  In.Parse.WorldSize = World;
  // Written beside the target and renamed on success: a failure leaves the
  // old output as it was (and the input is not an output).
  Expected<std::unique_ptr<OutputFile>> Out = OutputFile::create(Output, {StringRef(In.Path)});
  if (!Out) {
    ErrorLine("collc compile") << toString(Out.takeError()) << '\n';
    return ExitUserError;
  }
  unsigned Written = 0;
  int Exit = forEachProgram(In, [&](Program &P, DiagnosticEngine &Diags) -> Error {
    Expected<plan::Plan> Plan = compileProgram(P, Opts, Diags, errs());
    if (!Plan)
      return Plan.takeError();
    if (In.VerifyDiagnostics)
      return Error::success();
    // A plan file holds one plan: several go to standard output only (each
    // is read on its own there, as the tests do).
    if (++Written > 1 && Output != "-")
      return createStringError(inconvertibleErrorCode(),
                               "@%s is the input's program #%u: a plan file holds one plan, so "
                               "-o %s takes one program (give each its own file, or write to "
                               "standard output)",
                               P.name().str().c_str(), Written, Output.c_str());
    std::string Digest = writePlan(*Plan, (*Out)->os());
    if (Instrument.Stats)
      errs() << "compiled @" << P.name() << ": " << Plan->Comms.size() << " comms, "
             << Plan->Steps.size() << " steps, " << Digest << '\n';
    return Error::success();
  });
  if (Exit == ExitOk)
    if (Error E = (*Out)->commit()) {
      ErrorLine("collc compile") << toString(std::move(E)) << '\n';
      return ExitUserError;
    }
  return Exit;
}

} // namespace collc::tool
