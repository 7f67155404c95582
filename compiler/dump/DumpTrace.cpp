//===- compiler/dump/DumpTrace.cpp - The simulated step as a trace ---------===//
//
// Chrome trace event format (chrome://tracing, ui.perfetto.dev): one process
// per rank, one thread per compute stream and one for the comm stream;
// complete ("X") events with microsecond timestamps.
//
//===----------------------------------------------------------------------===//

#include "compiler/dump/Dump.h"

#include "plan/analysis/PlanStepModel.h"

#include "compiler/dump/JSONWriter.h"

#include "compiler/dump/ChromeTrace.h"

#include "llvm/Support/FormatVariadic.h"

#include <set>

using namespace llvm;

namespace collc {

static constexpr int64_t CommThread = 1000;

Error dumpTrace(const plan::Plan &P, const DumpOptions &Opts, raw_ostream &OS) {
  SimOptions SimOpts;
  SimOpts.Link = Opts.Link;
  SimOpts.RecordEvents = true;
  Expected<SimResult> Sim = simulatePlan(P, SimOpts);
  if (!Sim)
    return Sim.takeError();
  JSONWriter J(OS, 1);
  auto OtherData = [&] {
    J.attribute("link", Opts.Link.Name);
    J.attribute("step_us", Sim->StepUs);
    J.attribute("compute_only_step_us", Sim->ComputeOnlyStepUs);
    J.attribute("exposed_comm_us", Sim->ExposedCommUs);
  };
  writeChromeTrace(J, P, OtherData, [&] {
    std::set<std::pair<int64_t, int64_t>> Threads;
    for (const SimEvent &E : Sim->Events)
      Threads.insert({E.Rank, E.IsComm ? CommThread : int64_t(E.Stream)});
    for (int64_t R = 0; R != P.World; ++R)
      J.object([&] {
        J.attribute("ph", "M");
        J.attribute("name", "process_name");
        J.attribute("pid", R);
        J.attributeObject("args", [&] { J.attribute("name", "rank " + std::to_string(R)); });
      });
    for (const auto &Thread : Threads)
      J.object([&] {
        auto R = Thread.first;
        auto T = Thread.second;
        J.attribute("ph", "M");
        J.attribute("name", "thread_name");
        J.attribute("pid", R);
        J.attribute("tid", T);
        J.attributeObject("args", [&] {
          J.attribute("name", T == CommThread ? std::string("comm stream")
                                              : llvm::formatv("compute stream {0}", T).str());
        });
      });
    for (const SimEvent &E : Sim->Events)
      J.object([&] {
        J.attribute("ph", "X");
        if (E.IsComm) {
          const plan::Comm &C = P.Comms[E.Source];
          J.attribute("name", llvm::formatv("#{0} {1}", E.Source, commKindName(C.Kind)).str());
          J.attribute("cat", "comm");
          J.attribute("tid", CommThread);
          J.attributeObject("args", [&] {
            J.attribute("bytes", int64_t(C.inputBytes(P.Tensors)));
            J.attribute("tensors", int64_t(C.Inputs.size()));
            if (C.Bucket >= 0)
              J.attribute("bucket", C.Bucket);
          });
        } else {
          J.attribute("name", "@" + P.Computes[E.Source].Name);
          J.attribute("cat", "compute");
          J.attribute("tid", int64_t(E.Stream));
        }
        J.attribute("pid", E.Rank);
        J.attribute("ts", E.StartUs);
        J.attribute("dur", E.DurUs);
      });
  });
  OS << "\n";
  return Error::success();
}

} // namespace collc
