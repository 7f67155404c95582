//===- tools/collc/bench/PredictionCheck.cpp - Predicted against measured ----===//

#include "tools/collc/bench/PredictionCheck.h"

#include "plan/analysis/PlanStepModel.h"
#include "ir/Parser.h"
#include "passes/analysis/LinkFitting.h"
#include "compiler/Shrink.h"
#include "tools/collc/ToolSupport.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc::tool {

std::string transformerDdpProgram(int64_t World, unsigned Layers) {
  // A block's parameters in backward order (bias before weight), hidden
  // 256: MLP out and in, its layer norm, attention out and qkv, its layer
  // norm.
  const char *Shapes[] = {"[256]", "[1024, 256]", "[1024]", "[256, 1024]", "[256]", "[256]",
                          "[256]", "[256, 256]",  "[768]",  "[256, 768]",  "[256]", "[256]"};
  std::string S = formatv("program @transformer_ddp world({0}) {\n  group @dp = world\n", World);
  std::string Uses;
  for (unsigned L = Layers; L-- > 0;) {
    std::string Defs, Types;
    for (unsigned I = 0; I != std::size(Shapes); ++I) {
      Defs += formatv("{0}%g{1}.{2}", I ? ", " : "", L, I).str();
      Types += formatv("{0}f32{1}", I ? ", " : "", Shapes[I]).str();
    }
    S += formatv("  {0} = compute @bwd.h{1} cost(200us) : {2}\n", Defs, L, Types).str();
    for (unsigned I = 0; I != std::size(Shapes); ++I) {
      S += formatv("  %r{0}.{1} = all_reduce avg %g{0}.{1} in @dp\n", L, I).str();
      Uses += formatv("{0}%r{1}.{2}", Uses.empty() ? "" : ", ", L, I).str();
    }
  }
  return S + "  compute @optimizer(" + Uses + ") cost(300us)\n}\n";
}

/// The largest per-rank bytes a checked plan communicates: enough for
/// buckets of tens of MiB, small enough to replay quickly on one host.
static constexpr uint64_t CheckBytesPerRank = 32ull << 20;

/// Measurements of each plan, in rounds; the median counts.
static constexpr unsigned CheckRounds = 3;

static Expected<plan::Plan> compileShrunk(const CheckProgram &In, int64_t World,
                                          StringRef Policy) {
  ParseOptions PO;
  PO.WorldSize = World;
  Expected<ParsedProgram> P = parseProgramText(In.Text, In.Name, PO);
  if (!P)
    return P.takeError();
  int64_t Factor = 1;
  while (Factor < (1 << 20) && communicatedBytesPerRank(*P->Prog, Factor) > CheckBytesPerRank)
    Factor *= 2;
  if (Factor > 1)
    if (Error E = shrinkProgram(*P->Prog, Factor))
      return E;
  DiagnosticEngine Diags(P->Source.get());
  return compileWithBucketPolicy(*P->Prog, Diags, Policy);
}

Expected<PredictionSummary> checkPredictions(const LinkClass &Link, StringRef LinkArg,
                                             const std::vector<CheckProgram> &Programs,
                                             int64_t World,
                                             const std::vector<std::string> &Policies,
                                             double BudgetSec, StringRef Backend,
                                             ReplayTimer Time, raw_ostream &Out) {
  Out << formatv("# prediction check on {0}: plans replayed on the {2} backend with no "
                 "compute, {1} ranks, median of 3 rounds; predicted = simulated comm busy time\n",
                 Link.Name, World, Backend);
  Out << formatv("{0,-20} {1,-22} {2,7} {3,12} {4,13} {5,12} {6,8}\n", "program", "bucket",
                 "comms", "bytes/rank", "predicted_us", "measured_us", "error");
  struct Row {
    std::string Program, Policy;
    plan::Plan P;
    double PredictedUs = 0;
    std::vector<double> MeasuredUs; ///< one per round
  };
  std::vector<Row> Rows;
  SimOptions Opts;
  Opts.Link = Link;
  for (const CheckProgram &In : Programs)
    for (const std::string &Policy : Policies) {
      // auto chooses its buckets for the link under test.
      std::string Spelled = Policy == "auto" ? "auto:" + LinkArg.str() : Policy;
      Expected<plan::Plan> P = compileShrunk(In, World, Spelled);
      if (!P)
        return P.takeError();
      Expected<SimResult> Sim = simulatePlan(*P, Opts);
      if (!Sim)
        return Sim.takeError();
      Rows.push_back({In.Name, Policy, std::move(*P), Sim->CommBusyUs, {}});
    }
  // In rounds over every plan, as the calibration measures, so load that
  // comes and goes on a shared machine falls on both sides alike.
  for (unsigned Round = 0; Round != CheckRounds; ++Round)
    for (Row &R : Rows) {
      Expected<double> T = Time(R.P, BudgetSec / CheckRounds);
      if (!T)
        return T.takeError();
      R.MeasuredUs.push_back(*T);
    }
  std::vector<double> Errors;
  for (Row &R : Rows) {
    std::sort(R.MeasuredUs.begin(), R.MeasuredUs.end());
    double Measured = R.MeasuredUs[R.MeasuredUs.size() / 2];
    uint64_t Bytes = 0;
    for (const plan::Comm &C : R.P.Comms)
      Bytes += C.inputBytes(R.P.Tensors);
    double Err = relativeError(R.PredictedUs, Measured);
    Errors.push_back(Err);
    Out << formatv("{0,-20} {1,-22} {2,7} {3,12} {4,13:f1} {5,12:f1} {6,7:f1}%\n", R.Program,
                   R.Policy, R.P.Comms.size(), Bytes, R.PredictedUs, Measured, 100 * Err);
  }
  PredictionSummary S;
  S.Rows = Errors.size();
  if (!Errors.empty()) {
    std::sort(Errors.begin(), Errors.end());
    S.MedianRelError = Errors.size() % 2 ? Errors[Errors.size() / 2]
                                         : (Errors[Errors.size() / 2 - 1] +
                                            Errors[Errors.size() / 2]) / 2;
    S.WorstRelError = Errors.back();
  }
  Out << formatv("# prediction error over {0} plans: median {1:f1}%, worst {2:f1}%\n", S.Rows,
                 100 * S.MedianRelError, 100 * S.WorstRelError);
  return S;
}

} // namespace collc::tool
