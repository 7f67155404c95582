//===- tools/collc/bench/Calibrate.cpp - collc bench --calibrate -----------===//

#include "tools/collc/bench/Calibrate.h"

#include "compiler/Compile.h"
#include "passes/analysis/LinkFitting.h"
#include "tools/collc/bench/ReplayPlans.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc::tool {

/// Measurements of each size, in rounds (see calibrate).
static constexpr unsigned Rounds = 3;

/// How many ops of \p Bytes one measured plan issues: a plan's buckets
/// queue on the comm stream, so one op alone (waited for at once, run by the
/// waiting thread itself) would miss the stream's hand-off that every bucket
/// pays. The copies together stay near 4 MiB (two at least): on a CPU
/// backend the time per byte depends on whether the step's buffers fit in
/// cache, and eight copies of a large op would measure a colder step than
/// the plans it predicts.
static unsigned copiesAt(uint64_t Bytes) {
  return unsigned(std::clamp<uint64_t>((4ull << 20) / std::max<uint64_t>(Bytes, 1), 2, 8));
}

Expected<CalibratedLink> calibrate(const CalibrateOptions &O, ReplayTimer Time,
                                   raw_ostream &Out) {
  CalibratedLink L;
  L.Fit.Name = O.Name;
  L.Fit.Backend = O.Backend;
  L.Fit.World = O.World;
  L.Fit.Description = formatv("fitted by collc bench --calibrate on the {0} backend, {1} "
                              "ranks, replays of plans of same ops from 64 B to {2} B",
                              O.Backend, O.World, O.MaxBytes);
  struct Point {
    size_t Kind; ///< into calibratedKinds()
    uint64_t Bytes;
    unsigned Copies;
    plan::Plan P;
    std::vector<double> Us; ///< per op, one per round
  };
  std::vector<Point> Points;
  ArrayRef<OpKind> Kinds = calibratedKinds();
  for (size_t KI = 0; KI != Kinds.size(); ++KI) {
    OpKind K = Kinds[KI];
    uint64_t Granule = sameOpsGranule(K, O.World);
    size_t Before = Points.size();
    for (uint64_t B = 64; B <= O.MaxBytes; B *= 2) {
      if (B % Granule)
        continue;
      unsigned Copies = copiesAt(B);
      Expected<plan::Plan> P = sameOpsPlan(K, B, O.World, Copies);
      if (!P)
        return P.takeError();
      Points.push_back({KI, B, Copies, std::move(*P), {}});
    }
    if (Points.size() == Before)
      return createStringError(inconvertibleErrorCode(),
                               "--max-bytes %llu leaves no size to measure %s over %lld ranks "
                               "(the smallest is %llu)",
                               (unsigned long long)O.MaxBytes, opKindName(K).str().c_str(),
                               (long long)O.World,
                               (unsigned long long)std::max<uint64_t>(64, Granule));
  }
  // Rounds over the whole sweep, so a burst of load on a shared machine
  // lands on one round of many sizes rather than on every round of one;
  // each size keeps its median round.
  for (unsigned Round = 0; Round != Rounds; ++Round)
    for (Point &Pt : Points) {
      Expected<double> T = Time(Pt.P, O.BudgetSec / Rounds);
      if (!T)
        return T.takeError();
      Pt.Us.push_back(std::max(*T / Pt.Copies, 1e-3));
    }
  std::vector<std::vector<LinkSample>> Measured(Kinds.size());
  for (Point &Pt : Points) {
    std::sort(Pt.Us.begin(), Pt.Us.end());
    Measured[Pt.Kind].push_back({Pt.Bytes, Pt.Us[Pt.Us.size() / 2]});
  }
  for (size_t KI = 0; KI != Kinds.size(); ++KI) {
    L.Fit.Ranges[unsigned(Kinds[KI])] = fitLinkRanges(Kinds[KI], O.World, Measured[KI]);
    if (Kinds[KI] == OpKind::AllReduce)
      L.Overall = fitAlphaBeta(Kinds[KI], O.World, Measured[KI]);
  }

  // Each measurement beside what the link file will predict for it: the
  // cost model's own formula on the fitted link.
  LinkClass Fitted{L.Fit.Name, L.Overall.AlphaUs, L.Overall.BusGBps, L.Fit.Description, nullptr};
  Fitted.Fit = std::make_shared<LinkFit>(L.Fit);
  Out << formatv("# calibration: plans of 2 to 8 same ops replayed on the {1} backend, {0} ranks; the "
                 "median step of each, per op, median of 3 rounds\n",
                 O.World, O.Backend);
  Out << formatv("{0,15} {1,12} {2,12} {3,12} {4,8}\n", "op", "bytes", "measured_us",
                 "fitted_us", "error");
  for (size_t I = 0; I != Measured.size(); ++I) {
    OpKind K = calibratedKinds()[I];
    int64_t N = K == OpKind::Send ? 2 : O.World; // the simulator costs a pair over 2
    for (const LinkSample &S : Measured[I]) {
      double Fit = collectiveTimeUs(K, double(S.Bytes), N, Fitted);
      Out << formatv("{0,15} {1,12} {2,12:f2} {3,12:f2} {4,7:f1}%\n", opKindName(K), S.Bytes,
                     S.TimeUs, Fit, 100 * relativeError(Fit, S.TimeUs));
    }
  }
  Out << "# fitted ranges (least squares on relative error; a range per regime, see "
         "docs/passes.md)\n";
  for (OpKind K : calibratedKinds())
    for (const LinkRange &R : L.Fit.Ranges[unsigned(K)])
      Out << formatv("#   {0,-14} [{1}, {2}) B: alpha {3:f2} us, bus {4:f3} GB/s ({5} sizes, "
                     "median error {6:f1}%)\n",
                     opKindName(K), R.MinBytes, R.MaxBytes, R.Fit.AlphaUs, R.Fit.BusGBps,
                     R.Points, 100 * R.MedianRelError);
  return L;
}

} // namespace collc::tool
