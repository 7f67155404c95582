//===- tools/collc/ProcessRun.cpp - One rank of a multi-process run ----------===//

#include "tools/collc/ProcessRun.h"

#include "tools/collc/LocalRun.h"
#include "tools/collc/ProcessBackends.h"
#include "tools/collc/ToolSupport.h"

#include "runtime/verify/PlanChecker.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::tool {

namespace {

/// What each rank tells the others after its run, as words.
enum class RankOutcome : uint32_t { Ran = 0, Failed = 1, Mismatched = 2 };

/// [outcome, tensors checked, bytes checked (2 words), step times in µs as
/// floats (one word each)].
constexpr size_t HeaderWords = 4;

std::vector<uint32_t> reportWords(RankOutcome Outcome, const rt::CheckSummary &Sum,
                                  const std::vector<double> &StepUs, unsigned Steps) {
  std::vector<uint32_t> W = {uint32_t(Outcome), uint32_t(Sum.TensorsChecked),
                             uint32_t(Sum.BytesChecked), uint32_t(Sum.BytesChecked >> 32)};
  for (unsigned S = 0; S != Steps; ++S)
    W.push_back(bit_cast<uint32_t>(S < StepUs.size() ? float(StepUs[S]) : 0.0f));
  return W;
}

} // namespace

int runThisProcessRank(const plan::Plan &P, const ProcessRunOptions &O, raw_ostream &Out,
                       raw_ostream &Err) {
  int64_t Me = O.Place.Rank;
  auto Fail = [&](const Twine &Why) {
    Err << formatv("collc run: rank {0} of {1} ({2}): ", Me, O.Place.World, O.Backend) << Why
        << '\n';
    Err.flush();
    return ExitUserError;
  };
  if (Me == 0) {
    Out << formatv("running @{0} on {1} {2} processes for {3} steps (plan {4}, rendezvous {5})\n",
                   P.Program, O.Place.World, O.Backend, O.Steps, P.Digest, O.Where.text());
    Out.flush();
  }
  Expected<std::unique_ptr<rt::Executor>> Made =
      createProcessExecutor(O.Backend, P, O.Place, O.Where, O.Exec);
  if (!Made)
    return Fail(toString(Made.takeError()));
  rt::Executor &X = **Made;
  std::vector<std::vector<char>> Storage;
  LocalRun::Rank Res;
  runRank(P, X, O.Steps, /*Trace=*/false, Storage, Res);
  // A rank whose steps failed cannot count on its peers for the gather
  // below: it says why and stops; its peers fail too, naming it.
  if (!Res.Error.empty())
    return Fail(Res.Error);

  rt::CheckOptions Only;
  Only.OnlyRank = Me;
  Only.Reductions = reductionOrderOf(O.Backend);
  Expected<rt::CheckSummary> Check = rt::checkPlanResults(
      P,
      [&](int64_t R, uint32_t T) -> ArrayRef<char> {
        Expected<MutableArrayRef<char>> M = X.tensor(P.Tensors[T].Name);
        if (!M) {
          consumeError(M.takeError());
          return {};
        }
        return *M;
      },
      Only);
  RankOutcome Outcome = RankOutcome::Ran;
  rt::CheckSummary Mine;
  if (Check) {
    Mine = *Check;
  } else {
    Outcome = RankOutcome::Mismatched;
    Err << formatv("collc run: rank {0}: ", Me) << toString(Check.takeError()) << '\n';
    Err.flush();
  }

  std::vector<uint32_t> Words = reportWords(Outcome, Mine, Res.StepUs, O.Steps);
  Expected<std::vector<uint32_t>> All = X.allGatherWords(Words);
  if (!All)
    return Fail("gathering the ranks' figures: " + toString(All.takeError()));
  size_t Stride = Words.size();
  int64_t World = O.Place.World;
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
    for (unsigned S = 0; S != O.Steps; ++S) {
      double Slowest = 0;
      for (int64_t R = 0; R != World; ++R)
        Slowest = std::max<double>(Slowest, bit_cast<float>(Word(R, HeaderWords + S)));
      double GBs = Slowest > 0 ? double(Res.BytesMoved) / Slowest / 1e3 : 0.0;
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
