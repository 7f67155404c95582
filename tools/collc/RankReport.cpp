//===- tools/collc/RankReport.cpp - What the ranks of a process run report ===//

#include "tools/collc/RankReport.h"

#include "runtime/process/ProcessBackends.h"
#include "tools/collc/ToolSupport.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::tool {

namespace {

/// What each rank tells the others after its run, as words.
enum class RankOutcome : uint32_t { Ran = 0, Mismatched = 2 };

/// [outcome, tensors checked, bytes checked (2 words), step times in µs as
/// floats (one word each)].
constexpr size_t HeaderWords = 4;

std::vector<uint32_t> reportWords(const RankFigures &F) {
  RankOutcome Outcome = F.Verified ? RankOutcome::Ran : RankOutcome::Mismatched;
  std::vector<uint32_t> W = {uint32_t(Outcome), uint32_t(F.Checked.TensorsChecked),
                             uint32_t(F.Checked.BytesChecked),
                             uint32_t(F.Checked.BytesChecked >> 32)};
  for (unsigned S = 0; S != F.Steps; ++S)
    W.push_back(bit_cast<uint32_t>(S < F.StepUs.size() ? float(F.StepUs[S]) : 0.0f));
  return W;
}

} // namespace

Expected<rt::CheckSummary> checkThisRank(const plan::Plan &P, StringRef Backend, int64_t Me,
                                         rt::ActualTensor Actual) {
  rt::CheckOptions Only;
  Only.OnlyRank = Me;
  Only.Reductions = rt::reductionOrderOf(Backend);
  return rt::checkPlanResults(P, Actual, Only);
}

int reportAcrossRanks(const RankFigures &Mine, StringRef Backend, GatherWords Gather,
                      raw_ostream &Out, raw_ostream &Err) {
  int64_t Me = Mine.Rank, World = Mine.World;
  std::vector<uint32_t> Words = reportWords(Mine);
  Expected<std::vector<uint32_t>> All = Gather(Words);
  if (!All) {
    Err << formatv("collc run: rank {0} of {1} ({2}): gathering the ranks' figures: ", Me, World,
                   Backend)
        << toString(All.takeError()) << '\n';
    Err.flush();
    return ExitUserError;
  }
  size_t Stride = Words.size();
  auto Word = [&](int64_t R, size_t I) { return (*All)[R * Stride + I]; };
  std::vector<int64_t> Mismatched;
  uint64_t Tensors = 0, Bytes = 0;
  for (int64_t R = 0; R != World; ++R) {
    if (RankOutcome(Word(R, 0)) != RankOutcome::Ran)
      Mismatched.push_back(R);
    Tensors += Word(R, 1);
    Bytes += uint64_t(Word(R, 2)) | uint64_t(Word(R, 3)) << 32;
  }
  if (Me == 0) {
    // Each step's time on every rank, and the slowest (the step's time).
    Out << "step      slowest ms";
    for (int64_t R = 0; R != World; ++R)
      Out << formatv("  {0,9}", formatv("rank {0}", R).str());
    Out << '\n';
    for (unsigned S = 0; S != Mine.Steps; ++S) {
      double Slowest = 0;
      for (int64_t R = 0; R != World; ++R)
        Slowest = std::max<double>(Slowest, bit_cast<float>(Word(R, HeaderWords + S)));
      double GBs = Slowest > 0 ? double(Mine.BytesMoved) / Slowest / 1e3 : 0.0;
      Out << formatv("step {0,-3} {1,10:f3}", S + 1, Slowest / 1000.0);
      for (int64_t R = 0; R != World; ++R)
        Out << formatv("  {0,9:f3}", bit_cast<float>(Word(R, HeaderWords + S)) / 1000.0);
      Out << formatv("  ({0:f2} GB/s by rank 0)\n", GBs);
    }
    if (Mismatched.empty())
      Out << formatv("verified: {0} results on {1} ranks ({2:f1} MB) match the reference\n",
                     Tensors, World, double(Bytes) / 1e6);
    Out.flush();
  }
  if (!Mismatched.empty()) {
    if (Me == 0) {
      std::string Ranks;
      for (int64_t R : Mismatched)
        Ranks += (Ranks.empty() ? "" : ", ") + std::to_string(R);
      Err << "collc run: results differ from the reference on rank(s) " << Ranks
          << " (each printed its first differences)\n";
      Err.flush();
    }
    return ExitUserError;
  }
  return ExitOk;
}

} // namespace collc::tool
