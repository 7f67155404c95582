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
  Expected<Figures> evaluate(ArrayRef<unsigned> Depths, std::unique_ptr<Program> *Keep = nullptr,
                            bool AlwaysSimulate = false);

  /// A schedule being refined: depths, figures, and per unit why it moved.
  struct State {
    std::vector<unsigned> Depths;
    Figures F;
    std::vector<std::string> Gain;
  };
  /// Phase 2a: one unit later wherever the step is no longer and the peak
  /// no higher (and, with \p MustFit, within the budget).
  Error relax(State &S, bool MustFit);
  /// Phase 2b: earlier while the step gets shorter within the budget.
  Error spend(State &S);
  /// Tries unit K at depth \p Cand and keeps it when an earlier one makes
  /// the step shorter, or a later one keeps it no longer at no more peak
  /// (within the budget when \p MustFit); says why in S.Gain[K].
  Expected<bool> tryMove(State &S, size_t K, unsigned Cand, bool Earlier, bool MustFit);
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

Expected<Figures> Search::evaluate(ArrayRef<unsigned> Depths, std::unique_ptr<Program> *Keep,
                                   bool AlwaysSimulate) {
  std::unique_ptr<Program> C = P.clone();
  boundPrefetch(*C, Depths, [](size_t) { return std::string(); });
  Opts.LaunchAsync(*C);
  Figures F;
  F.Peak = programPeakMemory(*C, Opts.Layout);
  F.Fits = F.Peak.Bytes <= Opts.Budget;
  if (F.Fits || AlwaysSimulate) {
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

Expected<bool> Search::tryMove(State &S, size_t K, unsigned Cand, bool Earlier, bool MustFit) {
  constexpr double Tie = 1e-3; // a nanosecond: steps this close are equal
  unsigned Was = S.Depths[K];
  S.Depths[K] = Cand;
  Expected<Figures> F = evaluate(S.Depths, nullptr, /*AlwaysSimulate=*/!MustFit);
  if (!F)
    return F.takeError();
  const Figures &B = S.F;
  bool Keep = (F->Fits || !MustFit) &&
              (Earlier ? F->StepUs < B.StepUs - Tie
                       : F->StepUs <= B.StepUs + Tie && F->Peak.Bytes <= B.Peak.Bytes);
  if (!Keep) {
    S.Depths[K] = Was;
    return false;
  }
  if (Earlier)
    S.Gain[K] = formatv("the step is {0:f1} us shorter than {1}, peak {2} bytes",
                        B.StepUs - F->StepUs, describe(Was), F->Peak.Bytes);
  else
    S.Gain[K] = F->Peak.Bytes < B.Peak.Bytes
                    ? formatv("as short a step as {0}, with {1} bytes less peak", describe(Was),
                              B.Peak.Bytes - F->Peak.Bytes)
                          .str()
                    : formatv("as short a step and no more peak than {0}, and it holds its "
                              "gathers for less time",
                              describe(Was))
                          .str();
  S.F = *F;
  return true;
}

Error Search::relax(State &S, bool MustFit) {
  for (size_t K = 0; K != Units; ++K)
    if (std::optional<unsigned> Cand = later(K, S.Depths[K]))
      if (Expected<bool> Kept = tryMove(S, K, *Cand, false, MustFit); !Kept)
        return Kept.takeError();
  return Error::success();
}

Error Search::spend(State &S) {
  // At most three tries a unit: the time stays linear in the units.
  for (size_t K = 0; K != Units; ++K)
    for (unsigned Try = 0; Try != 3; ++Try) {
      std::optional<unsigned> Cand = earlier(K, S.Depths[K]);
      if (!Cand)
        break;
      Expected<bool> Kept = tryMove(S, K, *Cand, true, /*MustFit=*/true);
      if (!Kept)
        return Kept.takeError();
      if (!*Kept)
        break;
    }
  return Error::success();
}

Expected<PrefetchChoice> Search::run() {
  PrefetchChoice Out;
  // 1. One depth for every unit (every one simulated, fitting or not).
  std::vector<unsigned> Depths;
  for (unsigned D = 1; D < Units; D = D < 4 ? D + 1 : D + D / 2)
    Depths.push_back(D);
  Depths.push_back(0); // unbounded
  std::optional<Figures> Best, Fastest;
  unsigned FastestDepth = 0;
  for (unsigned D : Depths) {
    std::unique_ptr<Program> Copy;
    Expected<Figures> F = evaluate(uniform(D), &Copy, /*AlwaysSimulate=*/true);
    if (!F)
      return F.takeError();
    // A step shorter by less than a microsecond is not worth more memory.
    constexpr double SameUs = 1.0;
    auto Better = [&](const Figures &A, const Figures &B) {
      return A.StepUs < B.StepUs - SameUs ||
             (A.StepUs <= B.StepUs + SameUs && A.Peak.Bytes < B.Peak.Bytes);
    };
    if (!F->Fits) {
      if (!Out.Least || F->Peak.Bytes < Out.LeastPeak.Bytes) {
        Out.Least = std::move(Copy);
        Out.LeastPeak = F->Peak;
        Out.LeastDepth = D;
      }
      if (!Fastest || Better(*F, *Fastest)) {
        Fastest = *F;
        FastestDepth = D;
      }
      continue;
    }
    if (!Best || Better(*F, *Best)) {
      Best = *F;
      Out.Uniform = D;
    }
  }
  if (!Best)
    return Out;
  Out.Fits = true;
  Out.Least.reset();

  // 2. Unit by unit, from the best uniform depth that fits: first one later
  // wherever that costs neither step time nor peak, then earlier while the
  // step gets shorter within the budget.
  State S{uniform(Out.Uniform), *Best, std::vector<std::string>(Units)};
  if (Error E = relax(S, /*MustFit=*/true))
    return E;
  if (Error E = spend(S))
    return E;
  // 3. Also from the fastest uniform depth over the budget, when it is
  // faster than what 2 found: the memory its units do not need (1a without
  // the budget) may bring it within the budget, keeping its speed.
  unsigned Start = Out.Uniform;
  if (Fastest && Fastest->StepUs < S.F.StepUs - 1e-3) {
    State T{uniform(FastestDepth), *Fastest, std::vector<std::string>(Units)};
    if (Error E = relax(T, /*MustFit=*/false))
      return E;
    if (T.F.Fits) {
      if (Error E = spend(T))
        return E;
      if (T.F.StepUs < S.F.StepUs - 1e-3) {
        S = std::move(T);
        Start = FastestDepth;
      }
    }
  }
  Out.Uniform = Start;
  std::vector<unsigned> From = uniform(Start);
  Out.WhyOfUnit.assign(Units, std::string());
  for (size_t K = 0; K != Units; ++K)
    if (S.Depths[K] != From[K]) {
      Out.WhyOfUnit[K] = std::move(S.Gain[K]);
      ++Out.UnitsChanged;
    }
  Out.DepthOfUnit = std::move(S.Depths);
  Out.StepUs = S.F.StepUs;
  Out.Peak = S.F.Peak;
  Out.Simulations = Simulations;
  return Out;
}

} // namespace

Expected<PrefetchChoice> searchPrefetch(const Program &P, const PrefetchSearchOptions &Opts) {
  assert(Opts.LaunchAsync && "the schedule's async launch is needed to judge a candidate");
  return Search(P, Opts).run();
}

} // namespace collc
