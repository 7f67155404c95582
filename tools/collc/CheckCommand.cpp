//===- tools/collc/CheckCommand.cpp - collc check ----------------------===//
//
// collc check FILE: parse, verify and check that the ranks agree (the
// pipeline compile starts with, compiler/Compile.h checkPipeline); prints
// one summary line per program.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"

#include "compiler/Compile.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::tool {

static cl::SubCommand Cmd("check", "Parse and verify a program on every rank, and check that the "
                                   "ranks agree (check-cross-rank: same collectives, matched "
                                   "send/recv, no deadlock)");
static CommonInputFlags Flags(Cmd);
static cl::opt<bool> Quiet("quiet", cl::desc("Print nothing on success"), cl::sub(Cmd));

cl::SubCommand &checkCommand() { return Cmd; }

int run_checkCommand() {
  InputOptions In = Flags.get();
  return forEachProgram(In, [&](Program &P, DiagnosticEngine &Diags) -> Error {
    PassManager PM;
    if (Error E = PM.addPipeline(checkPipeline()))
      return E;
    PassContext Ctx(Diags);
    if (Error E = PM.run(P, Ctx, nulls()))
      return E;
    if (Quiet || In.VerifyDiagnostics)
      return Error::success();
    unsigned Comm = 0;
    for (const Op &O : P.ops())
      Comm += isCommunication(O.Kind);
    outs() << formatv("@{0}: ok: world {1}, {2} group{3}, {4} ops ({5} communication)\n", P.name(),
                      P.worldSize(), P.groups().size(), P.groups().size() == 1 ? "" : "s",
                      P.ops().size(), Comm);
    return Error::success();
  });
}

} // namespace collc::tool
