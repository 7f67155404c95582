//===- api/RecordApi.cpp - Flight records through the C API ----------------===//
//
// Where an executor's flight record is dumped, and a dump on demand
// (runtime/exec/FlightRecord.h, docs/diagnose.md): the C API's side of
// `collc run --record`.
//
//===----------------------------------------------------------------------===//

#include "api/ApiEntry.h"
#include "api/Handles.h"
#include "api/StepQueue.h"

#include "runtime/exec/Executor.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;
using namespace collc;
using namespace collc::api;

namespace {

/// A step queued on the executor's own thread (asyncReplay) may dump the
/// record when it fails: its place does not change under it.
Error checkNoStepQueued(collcExecutor_t Exec, StringRef Call) {
  if (!Exec->Steps || !Exec->Steps->pending())
    return Error::success();
  return makeApiError(collcInvalidUsage,
                      formatv("exec has {0} step(s) queued or running, which may dump its "
                              "record: expected collcExecutorSynchronize before {1}",
                              Exec->Steps->pending(), Call));
}

} // namespace

collcResult_t collcExecutorRecordTo(collcExecutor_t Exec, const char *Dir, int AtExit) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Error E = A.executor(Exec, "exec").done())
      return E;
    if (Error E = checkNoStepQueued(Exec, "collcExecutorRecordTo"))
      return E;
    StringRef To = Dir ? StringRef(Dir) : StringRef();
    if (To.empty() && AtExit)
      return makeApiError(collcInvalidArgument,
                          "atExit is set but dir is empty: expected a directory to dump into");
    Exec->Exec->setRecordPlace(To, AtExit != 0);
    return Error::success();
  });
}

collcResult_t collcExecutorRecordDump(collcExecutor_t Exec, const char *Dir) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Error E = A.executor(Exec, "exec").done())
      return E;
    return Exec->Exec->dumpFlightRecord(Dir ? StringRef(Dir) : StringRef());
  });
}
