//===- compiler/dump/DotFocus.cpp - What a DOT dump shows ------------------===//
//
// `--focus-rank`, `--focus-bucket` and `--focus-steps` of `collc dump --format
// dot`: each keeps a part of the graph, so a large plan can be read (and laid
// out) a piece at a time. The one place their values are checked against the
// plan.
//
//===----------------------------------------------------------------------===//

#include "compiler/dump/DotGraph.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

Expected<StepRange> parseStepRange(StringRef Text) {
  auto [A, B] = Text.split("..");
  if (!Text.contains(".."))
    B = A;
  StepRange R;
  if (A.trim().getAsInteger(10, R.First) || B.trim().getAsInteger(10, R.Last) || R.First < 0 ||
      R.Last < 0)
    return createStringError(inconvertibleErrorCode(),
                             "--focus-steps '%s' is not a step range: expected A..B, with "
                             "steps counted from 0",
                             Text.str().c_str());
  if (R.First > R.Last)
    return createStringError(inconvertibleErrorCode(),
                             "--focus-steps '%s' is empty: its first step is after its last",
                             Text.str().c_str());
  return R;
}

namespace dot {

static Error outOfRange(const Twine &Flag, int64_t Value, int64_t Count, const Twine &What,
                        const plan::Plan &P) {
  if (Count == 0)
    return createStringError(inconvertibleErrorCode(),
                             formatv("{0} {1}: plan @{2} has no {3}", Flag, Value, P.Program, What)
                                 .str());
  return createStringError(inconvertibleErrorCode(),
                           formatv("{0} {1} is not in 0..{2} (the {3} of plan @{4})", Flag, Value,
                                   Count - 1, What, P.Program)
                               .str());
}

Expected<std::vector<bool>> focusNodes(const plan::Plan &P, const Graph &G, const DotFocus &F) {
  std::vector<bool> Keep(G.NumNodes, true);
  auto ranksOf = [&](uint32_t N) -> const plan::RankSet & {
    return G.isComm(N) ? P.Comms[N - G.NumComputes].Ranks : P.Computes[N].Ranks;
  };
  if (F.Rank) {
    if (*F.Rank < 0 || *F.Rank >= P.World)
      return outOfRange("--focus-rank", *F.Rank, P.World, "ranks", P);
    for (uint32_t N = 0; N != G.NumNodes; ++N)
      Keep[N] = Keep[N] && ranksOf(N).contains(*F.Rank);
  }
  if (F.Steps) {
    int64_t NumSteps = int64_t(P.Steps.size());
    if (F.Steps->Last >= NumSteps)
      return outOfRange(formatv("--focus-steps {0}..{1}: step", F.Steps->First, F.Steps->Last),
                        F.Steps->Last, NumSteps, "steps", P);
    // A comm is in the range when it is in flight during it.
    for (uint32_t N = 0; N != G.NumNodes; ++N)
      Keep[N] = Keep[N] && G.FirstStep[N] >= 0 && G.FirstStep[N] <= F.Steps->Last &&
                G.LastStep[N] >= F.Steps->First;
  }
  if (F.Bucket) {
    int64_t NumBuckets = 0;
    for (const plan::Comm &C : P.Comms)
      NumBuckets = std::max<int64_t>(NumBuckets, C.Bucket + 1);
    if (*F.Bucket < 0 || *F.Bucket >= NumBuckets)
      return outOfRange("--focus-bucket", *F.Bucket, NumBuckets, "buckets", P);
    // The bucket's comm and the ops it exchanges data with.
    std::vector<bool> Near(G.NumNodes, false);
    for (uint32_t I = 0; I != P.Comms.size(); ++I)
      if (P.Comms[I].Bucket == *F.Bucket)
        Near[G.commNode(I)] = true;
    std::vector<bool> Bucket = Near;
    for (const DataEdge &E : G.Edges)
      if (Bucket[E.From] || Bucket[E.To])
        Near[E.From] = Near[E.To] = true;
    for (uint32_t N = 0; N != G.NumNodes; ++N)
      Keep[N] = Keep[N] && Near[N];
  }
  return Keep;
}

} // namespace dot
} // namespace collc
