//===- compiler/dump/DumpJSON.cpp - A plan as JSON -------------------------===//

#include "compiler/dump/Dump.h"

#include "compiler/dump/JSONWriter.h"
#include "plan/analysis/PlanStepModel.h"

using namespace llvm;

namespace collc {

namespace {

/// The plan's JSON, one section per member, in the order it is written.
class PlanJSON {
public:
  PlanJSON(const plan::Plan &P, const DumpOptions &Opts, raw_ostream &OS)
      : P(P), Opts(Opts), J(OS, 2) {}

  void write() {
    J.objectBegin();
    J.attribute("format", "collc-plan");
    J.attribute("version", P.Version);
    J.attribute("program", P.Program);
    J.attribute("world", P.World);
    J.attribute("digest", P.Digest);
    J.attributeArray("groups", [&] { groups(); });
    J.attributeArray("buckets", [&] { buckets(); });
    J.attributeArray("buffers", [&] { buffers(); });
    J.attributeObject("peak_memory", [&] { peakMemory(); });
    J.attributeArray("steps", [&] { steps(); });
    J.objectEnd();
  }

private:
  void names(ArrayRef<uint32_t> Ts) {
    J.arrayBegin();
    for (uint32_t T : Ts)
      J.value(P.Tensors[T].Name);
    J.arrayEnd();
  }

  void groups() {
    for (const plan::Group &G : P.Groups)
      J.object([&] {
        J.attribute("name", G.Name);
        J.attributeArray("subgroups", [&] {
          for (const auto &S : G.Subgroups)
            J.array([&] {
              for (int32_t R : S)
                J.value(R);
            });
        });
      });
  }

  /// Every comm is a bucket of one or more tensors, in launch order (a
  /// joint comm at its first side's launch, with its sides).
  void buckets() {
    std::vector<uint8_t> Listed(P.Comms.size(), 0);
    for (const plan::Step &S : P.Steps)
      if (S.Kind == plan::StepKind::Launch && !Listed[S.Index]++)
        J.object([&] { bucket(S.Index); });
  }

  void bucket(uint32_t Index) {
    const plan::Comm &C = P.Comms[Index];
    J.attribute("id", Index);
    J.attribute("kind", commKindName(C.Kind));
    if (plan::hasReduceOp(C.Kind))
      J.attribute("op", reduceOpName(C.Reduce));
    J.attribute("dtype", elemTypeName(C.Elem));
    J.attribute("group", C.Group >= 0 ? P.Groups[C.Group].Name : std::string("world"));
    J.attribute("bytes", int64_t(C.Kind == plan::CommKind::Recv ? C.outputBytes(P.Tensors)
                                                                : C.inputBytes(P.Tensors)));
    sideTensors(C, C);
    if (C.Bucket >= 0)
      J.attribute("bucket", C.Bucket);
    J.attribute("async", C.Async);
    if (C.Fenced)
      J.attribute("fenced", true);
    J.attribute("ranks", C.Ranks.str());
    if (Opts.Explain)
      explain(C);
    // A joint comm: the same collective, issued by other ranks through
    // other tensors (the fields above are its first side's).
    if (C.isJoint())
      J.attributeArray("joint", [&] {
        for (const plan::CommSide &Side : C.Joined)
          J.object([&] {
            J.attribute("ranks", Side.Ranks.str());
            sideTensors(C, Side);
            if (Opts.Explain)
              explain(Side);
          });
      });
  }

  /// What a side moves ("tensors": a recv's are its results) and its
  /// results.
  void sideTensors(const plan::Comm &C, const plan::CommSide &Side) {
    J.attributeBegin("tensors");
    names(C.Kind == plan::CommKind::Recv ? Side.Outputs : Side.Inputs);
    J.attributeEnd();
    J.attributeBegin("results");
    names(Side.Outputs);
    J.attributeEnd();
  }

  void explain(const plan::CommSide &Side) {
    J.attributeArray("why", [&] {
      for (const std::string &W : Side.Why)
        J.value(W);
    });
    J.attribute("loc", P.Source.empty() ? Side.Loc : P.Source + ":" + Side.Loc);
  }

  void buffers() {
    for (const plan::Buffer &B : P.Buffers)
      J.object([&] {
        J.attribute("bytes", int64_t(B.Bytes));
        J.attribute("segments", B.Segments);
        J.attributeArray("slots", [&] {
          for (const plan::Slot &S : B.Slots)
            J.object([&] {
              J.attribute("tensor", P.Tensors[S.Tensor].Name);
              J.attribute("offset", int64_t(S.Offset));
              J.attribute("bytes", int64_t(S.Bytes));
              J.attribute("mode", slotModeName(S.Mode));
            });
        });
      });
  }

  /// PeakMemory.h says what counts.
  void peakMemory() {
    PeakMemory Peak = planPeakMemory(P);
    J.attribute("bytes", int64_t(Peak.Bytes));
    J.attribute("tensor_bytes", int64_t(Peak.TensorBytes));
    J.attribute("staging_bytes", int64_t(Peak.StagingBytes));
    J.attribute("tensors", int64_t(Peak.Tensors));
    J.attribute("rank", Peak.Rank);
    if (Peak.Source)
      J.attribute("comm", int64_t(*Peak.Source));
  }

  void steps() {
    for (const plan::Step &S : P.Steps)
      J.object([&] {
        J.attribute("kind", stepKindName(S.Kind));
        if (S.Kind == plan::StepKind::Compute)
          J.attribute("compute", P.Computes[S.Index].Name);
        else
          J.attribute("comm", S.Index);
        J.attribute("ranks", P.ranksOf(S).str());
      });
  }

  const plan::Plan &P;
  const DumpOptions &Opts;
  JSONWriter J;
};

} // namespace

void dumpJSON(const plan::Plan &P, const DumpOptions &Opts, raw_ostream &OS) {
  PlanJSON(P, Opts, OS).write();
  OS << "\n";
}

} // namespace collc
