//===- tools/collc/DiffCommand.cpp - collc diff ------------------------===//
//
// collc diff PLAN_A PLAN_B: what differs, in words. Exit 0 either way (the
// report is the answer; --exit-code makes differences exit 4).
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"

#include "plan/PlanDiff.h"

using namespace llvm;

namespace collc::tool {

static cl::SubCommand Cmd("diff", "Say in words how two plans differ");
static cl::list<std::string> Inputs(cl::Positional, cl::desc("<plan A> <plan B>"), cl::OneOrMore,
                                    cl::sub(Cmd));
static cl::opt<bool> ExitCode("exit-code", cl::desc("Exit with 4 when the plans differ"),
                              cl::sub(Cmd));

cl::SubCommand &diffCommand() { return Cmd; }

int run_diffCommand() {
  if (Inputs.size() != 2) {
    errs() << "collc diff: expected two plans, got " << Inputs.size() << '\n';
    return ExitUsage;
  }
  Expected<plan::Plan> A = loadOrCompilePlan(Inputs[0], "ddp");
  if (!A)
    return reportError("diff", A.takeError());
  Expected<plan::Plan> B = loadOrCompilePlan(Inputs[1], "ddp");
  if (!B)
    return reportError("diff", B.takeError());
  std::vector<std::string> D = diffPlans(*A, *B);
  if (D.empty()) {
    outs() << "identical: " << A->Digest << '\n';
    return ExitOk;
  }
  for (const std::string &Line : D)
    outs() << Line << '\n';
  return ExitCode ? 4 : ExitOk;
}

} // namespace collc::tool
