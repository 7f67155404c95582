//===- compiler/dump/DumpText.cpp - A readable summary of a plan -----------===//

#include "compiler/dump/Dump.h"

#include "plan/analysis/PlanStepModel.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

std::string formatBytes(double B) {
  if (B >= 1024.0 * 1024 * 1024)
    return formatv("{0:f1} GiB", B / (1024.0 * 1024 * 1024));
  if (B >= 1024.0 * 1024)
    return formatv("{0:f1} MiB", B / (1024.0 * 1024));
  if (B >= 1024.0)
    return formatv("{0:f1} KiB", B / 1024.0);
  return formatv("{0} B", uint64_t(B));
}

std::string describePeakMemory(const plan::Plan &P, const PeakMemory &M) {
  std::string S = formatv("{0} ({1} bytes)", formatBytes(double(M.Bytes)), M.Bytes);
  if (!M.Source)
    return S + ": no communication allocates";
  return S + formatv(": {0} tensor{1} + {2} staging, reached at comm #{3} on rank {4}", M.Tensors,
                     M.Tensors == 1 ? "" : "s", formatBytes(double(M.StagingBytes)), *M.Source,
                     M.Rank)
                 .str();
}

static std::string commHeadline(const plan::Plan &P, const plan::Comm &C) {
  std::string S = commKindName(C.Kind).str();
  if (plan::hasReduceOp(C.Kind))
    S += " " + reduceOpName(C.Reduce).str();
  S += " " + elemTypeName(C.Elem).str();
  if (C.Group >= 0)
    S += " in @" + P.Groups[C.Group].Name;
  return S;
}

void dumpText(const plan::Plan &P, const DumpOptions &Opts, raw_ostream &OS) {
  size_t Buckets = 0;
  for (const plan::Comm &C : P.Comms)
    Buckets += C.Bucket >= 0;
  OS << formatv("plan @{0}: world {1}, {2} comms ({3} bucketed), {4} computes, {5} steps\n",
                P.Program, P.World, P.Comms.size(), Buckets, P.Computes.size(), P.Steps.size());
  OS << "digest " << P.Digest << "\n";
  for (const std::string &N : P.Notes)
    OS << N << "\n";
  OS << "\ngroups:\n";
  for (const plan::Group &G : P.Groups) {
    OS << "  @" << G.Name << ": " << G.Subgroups.size() << " subgroup"
       << (G.Subgroups.size() == 1 ? "" : "s") << ":";
    for (size_t S = 0; S != G.Subgroups.size() && S < 8; ++S) {
      OS << " [";
      for (size_t K = 0; K != G.Subgroups[S].size(); ++K)
        OS << (K ? " " : "") << G.Subgroups[S][K];
      OS << "]";
    }
    if (G.Subgroups.size() > 8)
      OS << " ...";
    OS << "\n";
  }

  OS << "\ncomms, in launch order:\n";
  // A joint comm is listed once, at its first side's launch, with its sides.
  std::vector<uint8_t> Listed(P.Comms.size(), 0);
  for (const plan::Step &S : P.Steps) {
    if (S.Kind != plan::StepKind::Launch || Listed[S.Index]++)
      continue;
    const plan::Comm &C = P.Comms[S.Index];
    OS << formatv("  #{0}", S.Index);
    if (C.Bucket >= 0)
      OS << " bucket " << C.Bucket;
    OS << ": " << commHeadline(P, C) << ", " << formatBytes(double(C.inputBytes(P.Tensors))) << ", "
       << C.Inputs.size() << (C.Inputs.size() == 1 ? " tensor" : " tensors")
       << (C.Async ? ", async" : ", blocking") << (C.Fenced ? ", fenced" : "");
    if (C.isJoint())
      OS << ", joint: " << C.numSides() << " ops, one collective\n";
    else
      OS << ", ranks " << C.Ranks.str() << "\n";
    for (size_t K = 0; K != C.numSides(); ++K) {
      const plan::CommSide &Side = C.side(K);
      OS << "      ";
      if (C.isJoint())
        OS << "ranks " << Side.Ranks.str() << ": ";
      ArrayRef<uint32_t> Shown = C.Kind == plan::CommKind::Recv ? Side.Outputs : Side.Inputs;
      for (size_t T = 0; T != Shown.size(); ++T) {
        if (T == 12 && !Opts.Explain) {
          OS << " ... (" << Shown.size() - T << " more)";
          break;
        }
        OS << (T ? " %" : "%") << P.Tensors[Shown[T]].Name;
      }
      if (C.isJoint() && !Side.Outputs.empty() && C.Kind != plan::CommKind::Recv)
        OS << " -> %" << P.Tensors[Side.Outputs.front()].Name
           << (Side.Outputs.size() > 1 ? " ..." : "");
      OS << "\n";
      if (Opts.Explain) {
        for (const std::string &W : Side.Why)
          OS << "      why " << W << "\n";
        if (!Side.Loc.empty())
          OS << "      from " << (P.Source.empty() ? "" : P.Source + ":") << Side.Loc << "\n";
      }
    }
  }

  uint64_t Total = 0, Views = 0, Copies = 0;
  for (const plan::Buffer &B : P.Buffers) {
    Total += B.Bytes;
    for (const plan::Slot &S : B.Slots)
      (S.Mode == plan::SlotMode::View ? Views : Copies) += 1;
  }
  OS << formatv("\nbuffers: {0}, {1} in all; {2} zero-copy views, {3} packed or unpacked\n",
                P.Buffers.size(), formatBytes(double(Total)), Views, Copies);
  OS << "peak memory per rank: " << describePeakMemory(P, planPeakMemory(P)) << "\n";
}

} // namespace collc
