//===- api/DumpApi.cpp - collc.h: dump and simulate a plan -------------===//
//
// The same dumps and figures as `collc dump` and `collc simulate`, from the
// same functions (compiler/dump/, plan/analysis/PlanStepModel.h,
// runtime/nccl/NcclListing.h).
//
//===----------------------------------------------------------------------===//

#include "api/ApiEntry.h"
#include "api/Handles.h"

#include "plan/analysis/PlanStepModel.h"
#include "compiler/dump/Dump.h"
#include "runtime/nccl/NcclListing.h"
#include "runtime/nccl/StreamOrderCheck.h"
#include "passes/analysis/LinkFile.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

using namespace llvm;
using namespace collc;
using namespace collc::api;

namespace {

Expected<LinkClass> linkOf(const char *Link, const char *Name) {
  Expected<LinkClass> L = resolveLink(Link ? Link : "h100-nvlink");
  if (!L)
    return makeApiError(collcInvalidArgument, Twine(Name) + ": " + toString(L.takeError()));
  return *L;
}

Expected<DumpOptions> dumpOptionsOf(const collcDumpOptions_t &O) {
  DumpOptions D;
  D.Explain = O.explain != 0;
  Expected<LinkClass> L = linkOf(O.link, "options->link");
  if (!L)
    return L.takeError();
  D.Link = *L;
  bool Dot = O.format == collcDumpDot;
  if (!Dot && (O.focusRank != -1 || O.focusBucket != -1 || O.focusSteps))
    return makeApiError(collcInvalidArgument,
                        "options->focusRank, focusBucket and focusSteps apply to collcDumpDot "
                        "only: expected -1, -1 and NULL");
  if (O.focusRank != -1)
    D.Focus.Rank = O.focusRank;
  if (O.focusBucket != -1)
    D.Focus.Bucket = O.focusBucket;
  if (O.focusSteps) {
    Expected<StepRange> R = parseStepRange(O.focusSteps);
    if (!R)
      return makeApiError(collcInvalidArgument,
                          "options->focusSteps: " + toString(R.takeError()));
    D.Focus.Steps = *R;
  }
  return D;
}

} // namespace

extern "C" {

collcResult_t collcDumpOptionsInitSized(collcDumpOptions_t *Options, size_t Size) {
  return entry(__func__, [&] {
    return initVersioned(Options, Size, collcDumpOptions_t COLLC_DUMP_OPTIONS_INIT, "options");
  });
}

// Version 1's symbol (collc.h's macro of this name calls the sized one).
collcResult_t(collcDumpOptionsInit)(collcDumpOptions_t *Options) {
  return entry(__func__, [&] {
    return initVersioned(Options, FirstVersionSize<collcDumpOptions_t>,
                         collcDumpOptions_t COLLC_DUMP_OPTIONS_INIT, "options");
  });
}

collcResult_t collcPlanDump(collcPlan_t Plan, const collcDumpOptions_t *Options, char **Out) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.plan(Plan, "plan")
        .notNull(Out, "out", "where to store the dump")
        .versioned(Options, "options", /*Optional=*/true);
    if (Options)
      A.inRange(Options->format, "options->format", collcDumpText, collcDumpNccl);
    if (Error E = A.done())
      return E;
    collcDumpOptions_t O = readVersioned(Options, collcDumpOptions_t COLLC_DUMP_OPTIONS_INIT);
    Expected<DumpOptions> D = dumpOptionsOf(O);
    if (!D)
      return D.takeError();
    const plan::Plan &P = *Plan->P;
    std::string S;
    raw_string_ostream OS(S);
    switch (O.format) {
    case collcDumpText:
      dumpText(P, *D, OS);
      break;
    case collcDumpJSON:
      dumpJSON(P, *D, OS);
      break;
    case collcDumpDot:
      if (Error E = dumpDot(P, *D, OS))
        return E;
      break;
    case collcDumpTrace:
      if (Error E = dumpTrace(P, *D, OS))
        return E;
      break;
    case collcDumpNccl: {
      Expected<rt::nccl::NcclRankPlan> L = rt::nccl::lowerRunnableForRank(P, O.rank);
      if (!L)
        return L.takeError();
      rt::nccl::printRankPlan(P, *L, OS);
      break;
    }
    }
    return returnString(OS.str(), Out);
  });
}

collcResult_t collcSimResultInitSized(collcSimResult_t *Result, size_t Size) {
  return entry(__func__, [&] {
    return initVersioned(Result, Size, collcSimResult_t COLLC_SIM_RESULT_INIT, "result");
  });
}

// Version 1's symbol (collc.h's macro of this name calls the sized one).
collcResult_t(collcSimResultInit)(collcSimResult_t *Result) {
  return entry(__func__, [&] {
    return initVersioned(Result, FirstVersionSize<collcSimResult_t>,
                         collcSimResult_t COLLC_SIM_RESULT_INIT, "result");
  });
}

collcResult_t collcPlanSimulate(collcPlan_t Plan, const char *Link, collcSimResult_t *Result) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Error E = A.plan(Plan, "plan").versioned(Result, "result", /*Optional=*/false).done())
      return E;
    SimOptions Opts;
    Expected<LinkClass> L = linkOf(Link, "link");
    if (!L)
      return L.takeError();
    Opts.Link = *L;
    Expected<SimResult> R = simulatePlan(*Plan->P, Opts);
    if (!R)
      return R.takeError();
    collcSimResult_t Out = COLLC_SIM_RESULT_INIT;
    Out.stepUs = R->StepUs;
    Out.computeOnlyUs = R->ComputeOnlyStepUs;
    Out.exposedCommUs = R->ExposedCommUs;
    Out.commBusyUs = R->CommBusyUs;
    Out.slowestRank = R->SlowestRank;
    // The figure `collc simulate`, the dumps and the JSON state (PeakMemory.h).
    PeakMemory Peak = planPeakMemory(*Plan->P);
    Out.peakMemoryBytes = Peak.Bytes;
    Out.peakMemoryTensorBytes = Peak.TensorBytes;
    Out.peakMemoryStagingBytes = Peak.StagingBytes;
    Out.peakMemoryTensors = Peak.Tensors;
    Out.peakMemoryRank = Peak.Rank;
    Out.peakMemoryComm = Peak.Source ? int64_t(*Peak.Source) : -1;
    // A caller's struct may be an earlier version: write only its fields.
    writeVersioned(Result, Out);
    return Error::success();
  });
}

} // extern "C"
