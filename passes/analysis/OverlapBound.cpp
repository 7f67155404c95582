//===- passes/analysis/OverlapBound.cpp - Perfect-overlap bound -----------===//

#include "passes/analysis/OverlapBound.h"

#include "passes/analysis/ProgramStepModel.h"

#include "ir/RankMasks.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cassert>

using namespace llvm;

namespace collc {

namespace {

bool isTimedComm(OpKind K) { return isCollective(K) || K == OpKind::Send || K == OpKind::Recv; }

/// Alpha and the bandwidth part of communication op \p O on \p Link, as the
/// step simulator costs it.
std::pair<double, double> alphaAndCost(const Program &P, const Op &O, const LinkClass &Link) {
  int64_t N = 2; // send/recv: a pair
  if (isCollective(O.Kind)) {
    N = P.group(O.Group).uniformSize();
    if (N < 1)
      N = P.worldSize();
  }
  double In = 0, Out = 0;
  for (ValueId V : O.dataOperands())
    In += double(P.value(V).Type.bytes());
  for (ValueId V : O.Results)
    Out += double(P.value(V).Type.bytes());
  double Alpha = collectiveTimeUs(O.Kind, 0, N, Link);
  return {Alpha, collectiveTimeUs(O.Kind, reportedBytes(O.Kind, In, Out), N, Link) - Alpha};
}

struct Input {
  double Ready, Cost;
};

/// The earliest one comm stream finishes \p In (sorted here), each sent
/// after it is ready, paying \p Alpha at least once.
double sendAllBound(std::vector<Input> &In, double Alpha) {
  // Latest ready first: what is still to send after each ready time.
  std::stable_sort(In.begin(), In.end(),
                   [](const Input &A, const Input &B) { return A.Ready > B.Ready; });
  double Rest = 0, Bound = 0;
  for (const Input &I : In) {
    Rest += I.Cost;
    Bound = std::max(Bound, I.Ready + Alpha + Rest);
  }
  return Bound;
}

/// The latest any rank's one comm stream can finish everything it sends,
/// given the ready times \p Ready.
double commStreamBound(const Program &P, const RankMasks &Masks, const LinkClass &Link,
                       ArrayRef<double> Ready) {
  const auto &Ops = P.ops();
  double Bound = 0;
  std::vector<Input> In;
  for (int64_t R = 0; R != P.worldSize(); ++R) {
    In.clear();
    double Alpha = 0;
    for (OpId D = 0; D != Ops.size(); ++D) {
      const BitVector *Mask = Masks.mask(D);
      if (!isTimedComm(Ops[D].Kind) || (Mask && !Mask->test(R)))
        continue;
      if (isCollective(Ops[D].Kind) && P.group(Ops[D].Group).subgroupOfTable()[R] < 0)
        continue;
      auto [A, C] = alphaAndCost(P, Ops[D], Link);
      Alpha = In.empty() ? A : std::min(Alpha, A);
      In.push_back({Ready[D], C});
    }
    Bound = std::max(Bound, sendAllBound(In, Alpha));
  }
  return Bound;
}

/// The earliest each compute may start, given when each op is ready at the
/// earliest (\p Ready, by OpId).
std::vector<double> holdBack(const Program &P, const LinkClass &Link, ArrayRef<double> Ready) {
  const auto &Ops = P.ops();
  std::vector<double> Earliest(Ops.size(), 0.0);
  std::vector<Input> In;
  for (OpId X = 0; X != Ops.size(); ++X) {
    if (Ops[X].Kind != OpKind::Compute)
      continue;
    // Each communication once, however many of its results X uses.
    SmallVector<OpId, 8> Defs;
    for (ValueId V : Ops[X].Operands)
      if (OpId D = P.value(V).Def; D != InvalidId && isTimedComm(Ops[D].Kind))
        Defs.push_back(D);
    llvm::sort(Defs);
    Defs.erase(std::unique(Defs.begin(), Defs.end()), Defs.end());
    In.clear();
    double Alpha = 0;
    for (OpId D : Defs) {
      auto [A, C] = alphaAndCost(P, Ops[D], Link);
      Alpha = In.empty() ? A : std::min(Alpha, A);
      In.push_back({Ready[D], C});
    }
    Earliest[X] = sendAllBound(In, Alpha);
  }
  return Earliest;
}

double maxOf(ArrayRef<double> V) { return V.empty() ? 0.0 : *std::max_element(V.begin(), V.end()); }

/// One run of \p M with free communication in any order, each compute held
/// back to \p Earliest: when each op is ready, by OpId (latest rank): a
/// compute's end, a communication's (free) end, when its inputs are ready on
/// every member (the sender's for a recv).
std::vector<double> readyTimes(const SimModel &M, size_t NumOps, ArrayRef<double> Earliest) {
  SimOptions Opts;
  Opts.Link = {"free", 0.0, 1e12, "no communication cost"};
  Opts.RecordFinish = Opts.StepOnly = true;
  Opts.EarliestStartUs = Earliest;
  Opts.UnorderedComm = true;
  // It walks the same rendezvous as the step the caller simulated first.
  std::optional<SimResult> Sim = simulateModel(M, Opts);
  assert(Sim && "the program was simulated before");
  Sim->FinishUs.resize(NumOps, 0.0);
  return std::move(Sim->FinishUs);
}

} // namespace

Expected<OverlapBound> perfectOverlapBound(const Program &P, const LinkClass &Link) {
  SimOptions Check;
  Check.Link = {"free", 0.0, 1e12, "no communication cost"};
  Check.StepOnly = true;
  Expected<SimResult> Free = simulateStep(P, Check);
  if (!Free)
    return Free.takeError();
  RankMasks Masks(P);
  SimModel M = programStepModel(P, Masks);
  // No fences: a plan makes every collective async.
  for (SimTask &T : M.Tasks)
    T.Async = true;
  size_t NumOps = P.ops().size();
  std::vector<double> Ready = readyTimes(M, NumOps, {}), Earliest;
  double ComputeOnly = maxOf(Ready);
  // Each round is a bound: ready times that are bounds give holds that are.
  // A hold delays what follows, so the next round's ready times are later
  // and its holds tighter, one link of a compute-comm-compute chain per
  // round (DDP: one round, its optimizer the one op held). Stop when nothing
  // moves, or after a fixed number of rounds (still a bound, looser).
  constexpr unsigned MaxRounds = 64;
  for (unsigned Round = 0; Round != MaxRounds; ++Round) {
    std::vector<double> Next = holdBack(P, Link, Ready);
    if (Next == Earliest)
      break;
    Earliest = std::move(Next);
    Ready = readyTimes(M, NumOps, Earliest);
  }
  // The step ends when the last compute ends, and no sooner than each
  // rank's comm stream can send all it sends.
  double Stream = commStreamBound(P, Masks, Link, Ready);
  return OverlapBound{std::max(maxOf(Ready), Stream), ComputeOnly,
                      std::max(maxOf(Earliest), Stream)};
}

} // namespace collc
