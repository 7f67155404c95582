//===- compiler/Compile.cpp - From a program to a plan ---------------------===//

#include "compiler/Compile.h"

#include "plan/analysis/PlanStepModel.h"
#include "ir/Parser.h"
#include "passes/Pass.h"
#include "passes/Prefetch.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace llvm;

namespace collc {

StringRef checkPipeline() { return "verify,check-cross-rank"; }

std::string defaultPipeline(StringRef BucketPass, StringRef PlanMemoryPass,
                            StringRef SchedulePass) {
  std::string P = checkPipeline().str() + ",order,";
  if (!BucketPass.empty())
    P += BucketPass.str() + ",";
  P += "fuse,order," + SchedulePass.str() + "," + PlanMemoryPass.str() + ",check-cross-rank";
  return P;
}

std::string schedulePassFor(uint64_t MemoryBudget, std::optional<unsigned> Prefetch) {
  std::vector<std::string> Options;
  if (Prefetch)
    Options.push_back("prefetch=" + std::to_string(*Prefetch));
  if (MemoryBudget)
    Options.push_back("memory-budget=" + std::to_string(MemoryBudget));
  if (Options.empty())
    return "schedule";
  return "schedule{" + llvm::join(Options, ",") + "}";
}

std::string fsdpDefaultSchedulePass() { return schedulePassFor(0, FsdpDefaultPrefetch); }
std::string unboundedSchedulePass() { return schedulePassFor(0, 0); }

Expected<std::string> bucketPassFor(StringRef Policy, uint64_t MemoryBudget) {
  std::string Budget = MemoryBudget ? ",memory-budget=" + std::to_string(MemoryBudget) : "";
  if (Policy == "ddp")
    return std::string("bucket{policy=ddp}");
  // PyTorch DDP with another bucket_cap_mb: its first bucket stays 1 MiB
  // (torch.distributed's _DEFAULT_FIRST_BUCKET_BYTES), the rest take the cap.
  if (Policy.consume_front("ddp:")) {
    Expected<uint64_t> Bytes = parseByteSize(Policy);
    if (!Bytes)
      return Bytes.takeError();
    if (!*Bytes)
      return createStringError(inconvertibleErrorCode(),
                               "--bucket=ddp:%s: expected a positive cap", Policy.str().c_str());
    return "bucket{policy=ddp,limits=" + std::to_string(1u << 20) + ":" + std::to_string(*Bytes) +
           "}";
  }
  if (Policy == "auto")
    return "bucket{policy=auto" + Budget + "}";
  // The link class auto simulates; the pass checks the name.
  if (Policy.consume_front("auto:"))
    return "bucket{policy=auto,link=" + Policy.str() + Budget + "}";
  if (Policy == "none")
    return std::string();
  if (Policy.consume_front("fixed:")) {
    Expected<uint64_t> Bytes = parseByteSize(Policy);
    if (!Bytes)
      return Bytes.takeError();
    return "bucket{policy=fixed,bytes=" + std::to_string(*Bytes) + "}";
  }
  return createStringError(inconvertibleErrorCode(),
                           "--bucket=%s: expected ddp, ddp:<bytes> (such as ddp:50MiB), "
                           "fixed:<bytes> (such as fixed:25MiB), auto, auto:<link class> or none",
                           Policy.str().c_str());
}

Expected<plan::Plan> compileProgram(Program &P, const CompileOptions &Opts, DiagnosticEngine &Diags,
                                    raw_ostream &Log) {
  PassManager PM(Opts.PM);
  std::string Pipeline = Opts.Pipeline.empty() ? defaultPipeline() : Opts.Pipeline;
  if (Error E = PM.addPipeline(Pipeline))
    return E;
  PassContext Ctx(Diags);
  auto Start = std::chrono::steady_clock::now();
  if (Error E = PM.run(P, Ctx, Log))
    return E;
  auto PassesDone = std::chrono::steady_clock::now();
  LoweringOptions L;
  L.Notes = Opts.Notes;
  // The plan's layout is plan-memory's, as the IR's `mem` attributes state
  // it; without one, the pipeline's options lay it out (Lowering.h).
  L.MemoryPlan = Ctx.MemoryPlan.get();
  if (Ctx.Layout)
    L.Layout = *Ctx.Layout;
  L.Notes.insert(L.Notes.begin(), "pipeline: " + Pipeline);
  Expected<plan::Plan> Plan = lowerToPlan(P, L);
  if (Opts.Phases) {
    using Seconds = std::chrono::duration<double>;
    Opts.Phases->Passes += Seconds(PassesDone - Start).count();
    Opts.Phases->Lowering += Seconds(std::chrono::steady_clock::now() - PassesDone).count();
  }
  if (!Plan || !Ctx.MemoryBudget)
    return Plan;
  // The budget the passes planned for, checked against the plan itself:
  // a pass after the one that met it (a later bucket or fuse, a layout of
  // its own) may have changed what the runtime holds.
  PeakMemory Peak = planPeakMemory(*Plan);
  if (Peak.Bytes <= Ctx.MemoryBudget)
    return Plan;
  // Plan comms are the program's communication ops in order.
  SMLoc Loc;
  if (Peak.Source) {
    uint32_t Comm = 0;
    for (const Op &O : P.ops()) {
      if (O.Kind == OpKind::Compute || O.Kind == OpKind::Wait)
        continue;
      if (Comm++ == *Peak.Source) {
        Loc = O.Loc;
        break;
      }
    }
  }
  Diags.error(Loc, formatv("the plan's peak communication memory per rank is {0} bytes ({1} "
                           "tensor{2} + {3} bytes staging), reached at this op's launch on rank "
                           "{4}: over the memory budget of {5} bytes that {6} planned for",
                           Peak.Bytes, Peak.Tensors, Peak.Tensors == 1 ? "" : "s",
                           Peak.StagingBytes, Peak.Rank, Ctx.MemoryBudget, Ctx.MemoryBudgetPass)
                       .str());
  return Diags.takeError("compile");
}

Expected<plan::Plan> compileProgramText(StringRef Text, StringRef Pipeline, StringRef BufferName) {
  Expected<ParsedProgram> P = parseProgramText(Text, BufferName);
  if (!P)
    return P.takeError();
  DiagnosticEngine Diags(P->Source.get());
  CompileOptions Opts;
  Opts.Pipeline = Pipeline.str();
  return compileProgram(*P->Prog, Opts, Diags, nulls());
}

std::string allReducesProgram(unsigned N, uint64_t Elements, int64_t World) {
  std::string S = formatv("program @all_reduces world({0}) {\n  group @dp = world\n", World);
  for (unsigned I = 0; I != N; ++I)
    S += formatv("  %g{0} = compute @g{0} : f32[{1}]\n  %r{0} = all_reduce sum %g{0} in @dp\n", I,
                 Elements)
             .str();
  S += "  compute @use(";
  for (unsigned I = 0; I != N; ++I)
    S += formatv("{0}%r{1}", I ? ", " : "", I).str();
  return S + ")\n}\n";
}

std::string tinyAllReducesProgram(unsigned N, int64_t World) {
  return allReducesProgram(N, 1024, World);
}

} // namespace collc
