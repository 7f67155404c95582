//===- runtime/diagnose/PlanCheck.cpp - A collc record against its plan ----===//

#include "runtime/diagnose/PlanCheck.h"

#include "runtime/diagnose/CollcRecordReader.h"
#include "runtime/exec/CommFacts.h"
#include "runtime/exec/StepWalk.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc::diag {

namespace {

/// The plan's launches of one rank in a replay, in order.
struct Launch {
  uint32_t Step, Comm;
};

std::vector<Launch> launchesOf(const plan::Plan &P, int64_t Rank) {
  std::vector<Launch> Out;
  for (size_t S : rt::stepsOfRank(P, Rank))
    if (P.Steps[S].Kind == plan::StepKind::Launch)
      Out.push_back({uint32_t(S), P.Steps[S].Index});
  return Out;
}

/// The group as the reader names it, from the plan.
std::string groupOf(const rt::CommFacts &F, const plan::Comm &C, int64_t Rank) {
  if (C.Kind == plan::CommKind::Send || C.Kind == plan::CommKind::Recv) {
    bool Sends = C.Kind == plan::CommKind::Send;
    return formatv("rank {0} to rank {1}", Sends ? Rank : F.Peer, Sends ? F.Peer : Rank).str();
  }
  return collcGroupName(F.Group, F.Subgroup);
}

} // namespace

std::vector<SkippedLaunch> skippedLaunches(const RankRecord &R, const plan::Plan &P) {
  std::vector<SkippedLaunch> Out;
  if (R.Rank < 0 || R.Rank >= P.World)
    return Out;
  std::vector<Launch> Plan = launchesOf(P, R.Rank);
  std::vector<rt::CommFacts> Facts = rt::commFactsOfRank(P, R.Rank);
  // Where each event stands in the plan's launches: (replay, index).
  auto IndexOf = [&](int64_t Step) -> std::optional<size_t> {
    auto It = std::lower_bound(Plan.begin(), Plan.end(), Step,
                               [](const Launch &L, int64_t S) { return int64_t(L.Step) < S; });
    if (It == Plan.end() || int64_t(It->Step) != Step)
      return std::nullopt;
    return size_t(It - Plan.begin());
  };
  for (size_t I = 1; I < R.Ops.size(); ++I) {
    const OpRecord &A = R.Ops[I - 1], &B = R.Ops[I];
    // Only events with nothing between them in the record (a dump taken
    // while the ring was written may lack one).
    if (B.Record != A.Record + 1)
      continue;
    std::optional<size_t> From = IndexOf(A.Step), To = IndexOf(B.Step);
    // Events the plan does not have are firstDeparture's to say; a replay
    // that went back (a new executor) starts over.
    if (!From || !To || B.Replay < A.Replay)
      continue;
    // Every launch after A and before B, across the replays between.
    for (int64_t Replay = A.Replay; Replay <= B.Replay; ++Replay) {
      size_t Begin = Replay == A.Replay ? *From + 1 : 0;
      size_t End = Replay == B.Replay ? *To : Plan.size();
      for (size_t K = Begin; K < End; ++K) {
        const Launch &L = Plan[K];
        const plan::Comm &C = P.Comms[L.Comm];
        Out.push_back({Replay, L.Step, L.Comm,
                       collcOpLabel(L.Comm, plan::commKindName(C.Kind),
                                    groupOf(Facts[L.Comm], C, R.Rank), L.Step, Replay)});
      }
      // Many replays skipped whole: the first are enough to say it.
      if (Out.size() > 64)
        return Out;
    }
  }
  return Out;
}

std::optional<std::string> firstDeparture(const RankRecord &R, const plan::Plan &P) {
  if (R.Rank < 0 || R.Rank >= P.World)
    return formatv("rank {0} is not in the plan's world of {1}", R.Rank, P.World).str();
  std::vector<rt::CommFacts> Facts = rt::commFactsOfRank(P, R.Rank);
  for (const OpRecord &Op : R.Ops) {
    bool IsLaunch = Op.Step >= 0 && size_t(Op.Step) < P.Steps.size() &&
                    P.Steps[Op.Step].Kind == plan::StepKind::Launch &&
                    int64_t(P.Steps[Op.Step].Index) == Op.Comm &&
                    P.ranksOf(P.Steps[Op.Step]).contains(R.Rank);
    if (!IsLaunch)
      return formatv("its {0} is no launch of the plan's for rank {1} at step {2}", Op.Label,
                     R.Rank, Op.Step)
          .str();
    const rt::CommFacts &F = Facts[Op.Comm];
    std::string Planned = collcSignature(F.Op, F.DType, F.Bytes);
    if (Planned != Op.Signature)
      return formatv("its {0} is {1}; the plan's is {2}", Op.Label, Op.Signature, Planned).str();
  }
  return std::nullopt;
}

} // namespace collc::diag
