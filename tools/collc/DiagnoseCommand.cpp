//===- tools/collc/DiagnoseCommand.cpp - collc diagnose ----------------===//
//
// collc diagnose DIR|DUMP... [--plan PLAN] [--format text|json]: reads the
// flight records a run left (collc's, or PyTorch Flight Recorder dumps in
// their JSON form) and names the root cause first, then the details
// (runtime/diagnose/Diagnosis.h has the rules). A missing or unreadable
// dump is a finding, not a failure; exit 1 only when no dump can be read.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"

#include "runtime/diagnose/Diagnosis.h"
#include "runtime/diagnose/DiagnosisReport.h"
#include "runtime/diagnose/JsonFields.h"
#include "runtime/diagnose/RecordSet.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace collc::tool {

static cl::SubCommand Cmd("diagnose", "Name the root cause of a hang or a dead rank from the "
                                      "flight records a run dumped");
static cl::list<std::string> Inputs(cl::Positional,
                                    cl::desc("<directory of dumps, or dump files>"),
                                    cl::OneOrMore, cl::sub(Cmd));
static cl::opt<std::string> PlanPath("plan",
                                     cl::desc("The plan the run meant to run (a plan, or the "
                                              "program it was compiled from): names the ranks "
                                              "that ran another, and the launches a rank "
                                              "skipped"),
                                     cl::value_desc("plan"), cl::sub(Cmd));
static cl::opt<std::string> Format("format", cl::desc("text (default) or json"),
                                   cl::init("text"), cl::sub(Cmd));

cl::SubCommand &diagnoseCommand() { return Cmd; }

/// The dumps named on the command line: every file of a directory, or the
/// files themselves.
static Expected<std::vector<diag::NamedText>> readInputs() {
  std::vector<diag::NamedText> All;
  for (const std::string &In : Inputs) {
    if (sys::fs::is_directory(In)) {
      Expected<std::vector<diag::NamedText>> Dir = diag::readDumpDirectory(In);
      if (!Dir)
        return Dir.takeError();
      std::move(Dir->begin(), Dir->end(), std::back_inserter(All));
      continue;
    }
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(In);
    if (!Buf)
      return createStringError(Buf.getError(), "cannot read '%s': %s", In.c_str(),
                               Buf.getError().message().c_str());
    if ((*Buf)->getBufferSize() > diag::MaxDumpBytes)
      return createStringError(inconvertibleErrorCode(),
                               "%s: more than the %zu bytes a dump may have", In.c_str(),
                               diag::MaxDumpBytes);
    All.push_back({In, (*Buf)->getBuffer().str()});
  }
  return All;
}

int run_diagnoseCommand() {
  if (Format != "text" && Format != "json") {
    ErrorLine("collc diagnose") << "--format " << Format << ": expected text or json\n";
    return ExitUsage;
  }
  std::optional<plan::Plan> Plan;
  if (!PlanPath.empty()) {
    Expected<plan::Plan> P = loadOrCompilePlan(PlanPath, "ddp");
    if (!P)
      return reportError("diagnose", P.takeError());
    Plan = std::move(*P);
  }
  Expected<std::vector<diag::NamedText>> Texts = readInputs();
  if (!Texts)
    return reportError("diagnose", Texts.takeError());
  Expected<diag::RecordSet> Set = diag::readRecords(*Texts);
  if (!Set)
    return reportError("diagnose", Set.takeError());
  diag::DiagnoseOptions O;
  O.Plan = Plan ? &*Plan : nullptr;
  diag::Diagnosis D = diag::diagnose(*Set, O);
  if (Format == "json")
    diag::printDiagnosisJson(D, outs());
  else
    diag::printDiagnosisText(D, outs());
  return ExitOk;
}

} // namespace collc::tool
