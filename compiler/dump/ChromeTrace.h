//===- compiler/dump/ChromeTrace.h - The frame of collc's Chrome traces -*- C++ -*-===//
//
// `collc dump --format trace` (the simulated step) and `collc run --trace`
// (the measured one) write Chrome/Perfetto traces with one frame: times in
// milliseconds, and the plan's program and digest in otherData, so that a
// trace always says which plan it shows.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_DUMP_CHROMETRACE_H
#define COLLC_COMPILER_DUMP_CHROMETRACE_H

#include "plan/Plan.h"
#include "compiler/dump/JSONWriter.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace collc {

/// Writes the trace of \p P: the frame, what \p OtherData adds to
/// otherData, and the events \p Events writes into traceEvents.
inline void writeChromeTrace(JSONWriter &J, const plan::Plan &P,
                             llvm::function_ref<void()> OtherData,
                             llvm::function_ref<void()> Events) {
  J.objectBegin();
  J.attribute("displayTimeUnit", "ms");
  J.attributeObject("otherData", [&] {
    J.attribute("program", P.Program);
    J.attribute("digest", P.Digest);
    OtherData();
  });
  J.attributeArray("traceEvents", Events);
  J.objectEnd();
}

} // namespace collc

#endif
