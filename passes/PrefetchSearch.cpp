//===- passes/PrefetchSearch.cpp - Each unit's gather launch under a budget ===//

#include "passes/PrefetchSearch.h"

#include "passes/Prefetch.h"
#include "passes/analysis/ProgramStepModel.h"

#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace llvm;

namespace collc {

namespace {

/// A schedule's figures; Fits false when its peak is over the budget (then
/// StepUs is not simulated).
struct Figures {
  bool Fits = false;
  double StepUs = 0;
  PeakMemory Peak;
};

class Search {
public:
  Search(const Program &P, const PrefetchSearchOptions &Opts)
      : P(P), Opts(Opts), Units(countPrefetchUnits(P)) {}

  Expected<PrefetchChoice> run();

private:
  /// \p Depths applied to a copy of the program, scheduled and measured;
  /// the copy is handed back through \p Keep when asked for.
  Expected<Figures> evaluate(ArrayRef<unsigned> Depths, std::unique_ptr<Program> *Keep = nullptr);
  /// Unit K's depths one unit earlier and one later than \p D, in that order
  /// (none where there is no such depth). 0 means where the gathers stand,
  /// as any depth beyond unit 0 does.
  std::optional<unsigned> earlier(size_t K, unsigned D) const {
    if (D == 0)
      return std::nullopt;
    return D + 1 > K ? 0 : D + 1;
  }
  std::optional<unsigned> later(size_t K, unsigned D) const {
    if (D == 0)
      return K >= 1 ? std::optional<unsigned>(unsigned(K)) : std::nullopt;
    return D > 1 ? std::optional<unsigned>(D - 1) : std::nullopt;
  }
  std::vector<unsigned> uniform(unsigned D) const {
    std::vector<unsigned> Out(Units);
    for (size_t K = 0; K != Units; ++K)
      Out[K] = D == 0 || D > K ? 0 : D;
    return Out;
  }
  static std::string describe(unsigned D) {
    return D ? formatv("{0} unit{1} ahead", D, D == 1 ? "" : "s").str()
             : std::string("where its shard is ready");
  }

  const Program &P;
  const PrefetchSearchOptions &Opts;
  size_t Units;
  unsigned Simulations = 0;
};

Expected<Figures> Search::evaluate(ArrayRef<unsigned> Depths, std::unique_ptr<Program> *Keep) {
  std::unique_ptr<Program> C = P.clone();
  boundPrefetch(*C, Depths, [](size_t) { return std::string(); });
  Opts.LaunchAsync(*C);
  Figures F;
  F.Peak = programPeakMemory(*C, Opts.Layout);
  F.Fits = F.Peak.Bytes <= Opts.Budget;
  if (F.Fits) {
    SimOptions Sim;
    Sim.Link = Opts.Link;
    Sim.StepOnly = true;
    Expected<SimResult> R = simulateStep(*C, Sim);
    if (!R)
      return R.takeError();
    ++Simulations;
    F.StepUs = R->StepUs;
  }
  if (Keep)
    *Keep = std::move(C);
  return F;
}

Expected<PrefetchChoice> Search::run() {
  PrefetchChoice Out;
  // 1. One depth for every unit.
  std::vector<unsigned> Depths;
  for (unsigned D = 1; D < Units; D = D < 4 ? D + 1 : D + D / 2)
    Depths.push_back(D);
  Depths.push_back(0); // unbounded
  std::optional<Figures> Best;
  for (unsigned D : Depths) {
    std::unique_ptr<Program> Copy;
    Expected<Figures> F = evaluate(uniform(D), &Copy);
    if (!F)
      return F.takeError();
    if (!F->Fits) {
      if (!Out.Least || F->Peak.Bytes < Out.LeastPeak.Bytes) {
        Out.Least = std::move(Copy);
        Out.LeastPeak = F->Peak;
        Out.LeastDepth = D;
      }
      continue;
    }
    // A step shorter by less than a microsecond is not worth more memory.
    constexpr double SameUs = 1.0;
    if (!Best || F->StepUs < Best->StepUs - SameUs ||
        (F->StepUs <= Best->StepUs + SameUs && F->Peak.Bytes < Best->Peak.Bytes)) {
      Best = *F;
      Out.Uniform = D;
    }
  }
  if (!Best)
    return Out;
  Out.Fits = true;
  Out.Least.reset();

  // 2. Unit by unit. First one later wherever that costs no step time and
  // no peak (memory the step does not need), then earlier, one unit at a
  // time while the step gets shorter and the peak fits (memory spent where
  // it hides communication). A cap on the simulations bounds the time.
  std::vector<unsigned> Cur = uniform(Out.Uniform);
  std::vector<std::string> Gain(Units);
  constexpr double Tie = 1e-3; // a nanosecond: steps this close are equal
  const unsigned Cap = Simulations + 3 * unsigned(Units) + 8;
  auto Try = [&](size_t K, unsigned Cand, bool Earlier) -> Expected<bool> {
    unsigned Was = Cur[K];
    Cur[K] = Cand;
    Expected<Figures> F = evaluate(Cur);
    if (!F)
      return F.takeError();
    bool Keep = F->Fits && (Earlier ? F->StepUs < Best->StepUs - Tie
                                    : F->StepUs <= Best->StepUs + Tie &&
                                          F->Peak.Bytes <= Best->Peak.Bytes);
    if (!Keep) {
      Cur[K] = Was;
      return false;
    }
    if (Earlier)
      Gain[K] = formatv("the step is {0:f1} us shorter than {1}, peak {2} bytes",
                        Best->StepUs - F->StepUs, describe(Was), F->Peak.Bytes);
    else
      Gain[K] = F->Peak.Bytes < Best->Peak.Bytes
                    ? formatv("as short a step as {0}, with {1} bytes less peak", describe(Was),
                              Best->Peak.Bytes - F->Peak.Bytes)
                          .str()
                    : formatv("as short a step and no more peak than {0}, and it holds its "
                              "gathers for less time",
                              describe(Was))
                          .str();
    Best = *F;
    return true;
  };
  for (size_t K = 0; K != Units && Simulations < Cap; ++K)
    if (std::optional<unsigned> Cand = later(K, Cur[K]))
      if (Expected<bool> Kept = Try(K, *Cand, false); !Kept)
        return Kept.takeError();
  for (size_t K = 0; K != Units && Simulations < Cap; ++K)
    while (Simulations < Cap) {
      std::optional<unsigned> Cand = earlier(K, Cur[K]);
      if (!Cand)
        break;
      Expected<bool> Kept = Try(K, *Cand, true);
      if (!Kept)
        return Kept.takeError();
      if (!*Kept)
        break;
    }
  std::vector<unsigned> Start = uniform(Out.Uniform);
  Out.WhyOfUnit.assign(Units, std::string());
  for (size_t K = 0; K != Units; ++K)
    if (Cur[K] != Start[K]) {
      Out.WhyOfUnit[K] = std::move(Gain[K]);
      ++Out.UnitsChanged;
    }
  Out.DepthOfUnit = std::move(Cur);
  Out.StepUs = Best->StepUs;
  Out.Peak = Best->Peak;
  Out.Simulations = Simulations;
  return Out;
}

} // namespace

Expected<PrefetchChoice> searchPrefetch(const Program &P, const PrefetchSearchOptions &Opts) {
  assert(Opts.LaunchAsync && "the schedule's async launch is needed to judge a candidate");
  return Search(P, Opts).run();
}

} // namespace collc
