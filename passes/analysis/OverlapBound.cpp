//===- passes/analysis/OverlapBound.cpp - Perfect-overlap bound -----------===//

#include "passes/analysis/OverlapBound.h"

#include "passes/analysis/ProgramStepModel.h"

#include "ir/RankMasks.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>

using namespace llvm;

namespace collc {

namespace {

bool isTimedComm(OpKind K) { return isCollective(K) || K == OpKind::Send || K == OpKind::Recv; }

struct CommCost {
  double Alpha = 0, Bytes = 0; ///< us: alpha, and the bandwidth part
};

/// A lower bound on communication op \p O's time on \p Link, in whatever
/// bucket it is sent: for a built-in class, its time as the step simulator
/// costs it; for a calibrated link, the least alpha and the least time per
/// byte of any size range (a bucket is priced at the range of its total
/// size, which may be cheaper per byte than the op's own: pricing the op at
/// its own range made the "bound" exceed plans that bucket).
CommCost commCost(const Program &P, const Op &O, const LinkClass &Link) {
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
  std::vector<TimePiece> Pieces = collectiveTimePieces(O.Kind, N, Link);
  double Alpha = Pieces.front().AlphaUs, PerByte = Pieces.front().UsPerByte;
  for (const TimePiece &T : Pieces) {
    Alpha = std::min(Alpha, T.AlphaUs);
    PerByte = std::min(PerByte, T.UsPerByte);
  }
  if (Pieces.size() == 1) // exactly the simulator's figure
    Alpha = collectiveTimeUs(O.Kind, 0, N, Link);
  double Bytes = reportedBytes(O.Kind, In, Out);
  return {Alpha, Pieces.size() == 1 ? collectiveTimeUs(O.Kind, Bytes, N, Link) - Alpha
                                    : Bytes * PerByte};
}

struct Input {
  double Ready, Cost;
};

/// The earliest one comm stream finishes \p In (sorted here), each sent
/// after it is ready, paying \p Alpha at least once.
double sendAllBound(MutableArrayRef<Input> In, double Alpha) {
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

/// What a compute waits for: one value of each communication it uses.
struct Feed {
  ValueId Value;
  OpId Comm;
};

} // namespace

Expected<OverlapBound> perfectOverlapBound(const Program &P, const LinkClass &Link) {
  SimOptions Free;
  Free.Link = freeLinkClass();
  Free.StepOnly = true;
  // Fails, with the simulator's words, on what cannot be simulated.
  if (Expected<SimResult> R = simulateStep(P, Free); !R)
    return R.takeError();

  const auto &Ops = P.ops();
  std::vector<CommCost> Cost(Ops.size());
  std::vector<SmallVector<Feed, 2>> Feeds(Ops.size());
  for (OpId X = 0; X != Ops.size(); ++X) {
    if (isTimedComm(Ops[X].Kind))
      Cost[X] = commCost(P, Ops[X], Link);
    if (Ops[X].Kind != OpKind::Compute)
      continue;
    // Each communication once, however many of its results X uses.
    for (ValueId V : Ops[X].Operands)
      if (OpId D = P.value(V).Def; D != InvalidId && isTimedComm(Ops[D].Kind))
        Feeds[X].push_back({V, D});
    llvm::sort(Feeds[X], [](const Feed &A, const Feed &B) { return A.Comm < B.Comm; });
    Feeds[X].erase(std::unique(Feeds[X].begin(), Feeds[X].end(),
                               [](const Feed &A, const Feed &B) { return A.Comm == B.Comm; }),
                   Feeds[X].end());
  }

  RankMasks Masks(P);
  SimModel M = programStepModel(P, Masks);
  // No fences: a plan makes every collective async, and no launch need
  // wait for earlier computes (a program may already say `fenced`).
  for (SimTask &T : M.Tasks) {
    T.Async = true;
    T.Fenced = false;
  }
  // With free communication in any order, a communication's result is ready
  // when its inputs are, on every member (the sender's, for a recv): no
  // sooner can it start. A compute that uses results of communications
  // waits until one comm stream could have sent them all.
  SimOptions Opts = Free;
  Opts.RecordFinish = true;
  Opts.UnorderedComm = true;
  std::vector<Input> In;
  Opts.EarliestStart = [&](int64_t, const SimTask &T, function_ref<double(uint32_t)> ReadyOf) {
    In.clear();
    double Alpha = 0;
    for (const Feed &F : Feeds[T.Source]) {
      Alpha = In.empty() ? Cost[F.Comm].Alpha : std::min(Alpha, Cost[F.Comm].Alpha);
      In.push_back({ReadyOf(F.Value), Cost[F.Comm].Bytes});
    }
    return sendAllBound(In, Alpha);
  };
  std::optional<SimResult> Held = simulateModel(M, Opts);
  Free.UnorderedComm = true;
  std::optional<SimResult> ComputeOnly = simulateModel(M, Free);
  if (!Held || !ComputeOnly)
    return createStringError(inconvertibleErrorCode(), "@%s stalls with communication unordered",
                             P.name().str().c_str());
  std::vector<double> &Ready = Held->FinishUs;
  Ready.resize(Ops.size(), 0.0);

  // No rank's step ends before its one comm stream has sent all it sends.
  double Stream = 0;
  for (int64_t R = 0; R != P.worldSize(); ++R) {
    In.clear();
    double Alpha = 0;
    for (OpId D = 0; D != Ops.size(); ++D) {
      const BitVector *Mask = Masks.mask(D);
      if (!isTimedComm(Ops[D].Kind) || (Mask && !Mask->test(R)))
        continue;
      if (isCollective(Ops[D].Kind) && P.group(Ops[D].Group).subgroupOfTable()[R] < 0)
        continue;
      Alpha = In.empty() ? Cost[D].Alpha : std::min(Alpha, Cost[D].Alpha);
      In.push_back({Ready[D], Cost[D].Bytes});
    }
    Stream = std::max(Stream, sendAllBound(In, Alpha));
  }
  // The last op that waits for communication may start no sooner than its
  // hold: the step less what follows it.
  double CommDone = Stream;
  for (OpId X = 0; X != Ops.size(); ++X)
    if (!Feeds[X].empty())
      CommDone = std::max(CommDone, Ready[X] - double(Ops[X].CostNs) / 1000.0);
  return OverlapBound{std::max(Held->StepUs, Stream), ComputeOnly->StepUs, CommDone};
}

} // namespace collc
