//===- tools/collc/SimulateCommand.cpp - collc simulate ----------------===//
//
// collc simulate FILE|PLAN [--link L]: the step time of the plan on a link
// class or a calibrated link file, next to the eager baseline (the program
// as written, every collective blocking) and the perfect-overlap bound when
// given a program.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"

#include "plan/analysis/PlanStepModel.h"
#include "compiler/dump/Dump.h"
#include "passes/analysis/OverlapBound.h"
#include "passes/analysis/ProgramStepModel.h"
#include "passes/analysis/LinkFile.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::tool {

static cl::SubCommand Cmd("simulate", "Simulate one step of a plan with the cost model");
// Optional only so that --list-links needs none; checked below.
static cl::opt<std::string> Input(cl::Positional, cl::desc("<plan, or a .coll program>"),
                                  cl::sub(Cmd));
static cl::opt<std::string> Link("link",
                                 cl::desc("Link class: h100-nvlink, h200-nvlink, ib-ndr, pcie, "
                                          "local; or a link file (collc bench --calibrate)"),
                                 cl::init("h100-nvlink"), cl::sub(Cmd));
static cl::opt<std::string> Bucket("bucket", cl::desc("Bucket policy when compiling a program"),
                                   cl::init("ddp"), cl::sub(Cmd));
static cl::opt<bool> ListLinks("list-links", cl::desc("List the link classes and exit"),
                               cl::sub(Cmd));

cl::SubCommand &simulateCommand() { return Cmd; }

int run_simulateCommand() {
  if (ListLinks) {
    for (const LinkClass &L : linkClasses())
      outs() << formatv("  {0,-12} alpha {1,5:f1} us, bus {2,6:f1} GB/s  {3}\n", L.Name, L.AlphaUs,
                        L.BusGBps, L.Description);
    return ExitOk;
  }
  if (Input.empty()) {
    ErrorLine("collc simulate")
        << "expected a plan or a .coll program (or --list-links)\n";
    return ExitUsage;
  }
  Expected<LinkClass> L = resolveLink(Link);
  if (!L) {
    ErrorLine("collc simulate") << toString(L.takeError()) << '\n';
    return ExitUsage;
  }
  SimOptions Opts;
  Opts.Link = *L;
  int Exit = ExitOk;
  std::optional<CommandInput> In = readBucketedInput("simulate", Input, Bucket, Exit);
  if (!In)
    return Exit;
  // auto chooses its buckets for the link simulated here.
  std::string Policy = Bucket == "auto" ? "auto:" + Link : Bucket;
  Expected<plan::Plan> P = loadOrCompilePlan(*In, Policy);
  if (!P)
    return reportError("simulate", P.takeError());
  Expected<SimResult> R = simulatePlan(*P, Opts);
  if (!R)
    return reportError("simulate", R.takeError());
  auto Ms = [](double Us) { return Us / 1000.0; };
  outs() << formatv("@{0}, world {1}, on {2}:\n", P->Program, P->World, L->Name);
  outs() << formatv("  step              {0,9:f3} ms (slowest rank {1})\n", Ms(R->StepUs),
                    R->SlowestRank);
  outs() << formatv("  compute only      {0,9:f3} ms\n", Ms(R->ComputeOnlyStepUs));
  outs() << formatv("  exposed comm      {0,9:f3} ms ({1:f1}% of the step)\n", Ms(R->ExposedCommUs),
                    R->StepUs > 0 ? 100.0 * R->ExposedCommUs / R->StepUs : 0);
  outs() << formatv("  comm busy         {0,9:f3} ms\n", Ms(R->CommBusyUs));
  outs() << "  peak memory       " << describePeakMemory(*P, planPeakMemory(*P)) << "\n";
  if (!In->isPlan()) {
    // The program as written: no buckets, no overlap.
    Expected<ParsedProgram> Eager = parseProgramText(In->text(), In->Name);
    if (!Eager)
      return reportError("simulate", Eager.takeError());
    Expected<SimResult> E = simulateStep(*Eager->Prog, Opts);
    if (!E)
      return reportError("simulate", E.takeError());
    outs() << formatv("  eager (as written) {0,8:f3} ms, exposed comm {1:f3} ms; compiled is "
                      "{2:f2}x faster\n",
                      Ms(E->StepUs), Ms(E->ExposedCommUs),
                      R->StepUs > 0 ? E->StepUs / R->StepUs : 0);
    // What no plan of this program can beat.
    Expected<OverlapBound> B = perfectOverlapBound(*Eager->Prog, *L);
    if (!B)
      return reportError("simulate", B.takeError());
    outs() << formatv("  bound (perfect overlap) {0:f3} ms, exposed comm {1:f3} ms ({2:f3} ms with "
                      "the optimizer split); this plan's step is {3:f2}x it\n",
                      Ms(B->StepUs), Ms(B->exposedUs()), Ms(B->exposedWithSplitTailUs()),
                      B->StepUs > 0 ? R->StepUs / B->StepUs : 0);
  }
  return ExitOk;
}

} // namespace collc::tool
