//===- passes/Schedule.cpp - Overlap communication with compute ------------===//
//
// Requires: a verified program, best after `order` (which puts each
// collective right after its last producer). Ensures: every collective
// (not barrier) is `async`: it launches where it stands, on the comm
// stream, and a `wait` for all its results sits right before the first op
// that uses one of them (or at the end of the program when none does).
// Compute ops stay on their compute streams, in their order.
//
// First, parameter gathers are launched no earlier than bounded prefetch
// allows (Prefetch.h): `prefetch=N` units in flight, PyTorch FSDP's default
// 2 (0: unbounded, where `order` put them). With `memory-budget=BYTES` the
// pass chooses the depth instead, as XLA's latency-hiding scheduler hoists
// while it tracks memory pressure: of the depths 1, 2, 3, 4, 6, 8, ... and
// unbounded, the one whose simulated step (on `link`) is shortest while the
// peak communication memory per rank (analysis/PeakMemory.h) stays within
// the budget; a budget no depth meets is a located error with the figures.
// Across ranks: one rewrite of the one program; waits do not communicate
// and gathers move identically on every rank, never across point-to-point.
//
// The decision is the program itself: the async op stands where it launches
// and its `wait` where the result is first needed (the plan dump names
// both); a gather moved by prefetch is `fenced` and says why (`prefetch_why`).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/Prefetch.h"
#include "passes/analysis/ProgramStepModel.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

struct ScheduleOptions {
  unsigned Prefetch = FsdpDefaultPrefetch;
  uint64_t Budget = 0; ///< 0: none
  LinkClass Link = defaultLinkClass();
};

class SchedulePass : public Pass {
public:
  explicit SchedulePass(ScheduleOptions Opts) : Opts(std::move(Opts)) {}
  StringRef name() const override { return "schedule"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override;

private:
  Expected<unsigned> chooseDepth(const Program &P, PassContext &Ctx);
  ScheduleOptions Opts;
};

/// Every collective not yet async becomes async where it stands, with a
/// wait before its first use. Returns how many.
int64_t launchAsync(Program &P) {
  std::vector<Op> &Ops = P.ops();
  size_t N = Ops.size();
  // First use of each value.
  std::vector<OpId> FirstUse(P.numValues(), InvalidId);
  for (OpId I = N; I-- > 0;)
    for (ValueId V : Ops[I].Operands)
      FirstUse[V] = I;

  // (position, wait) pairs; sorted by position below, stable for ties.
  std::vector<std::pair<OpId, Op>> Waits;
  int64_t Scheduled = 0;
  for (OpId I = 0; I != N; ++I) {
    Op &O = Ops[I];
    if (!isCollective(O.Kind) || O.Kind == OpKind::Barrier || O.Async)
      continue;
    OpId Use = N;
    for (ValueId V : O.Results)
      Use = std::min<OpId>(Use, FirstUse[V] == InvalidId ? N : FirstUse[V]);
    // A p2p block is issued as one: wait before the block, not inside it.
    while (Use != N && Use > 0 && Ops[Use].Batch != InvalidId && Ops[Use - 1].Batch == Ops[Use].Batch)
      --Use;
    O.Async = true;
    Op W;
    W.Kind = OpKind::Wait;
    W.Loc = O.Loc;
    W.When = O.When;
    W.Operands.assign(O.Results.begin(), O.Results.end());
    Waits.push_back({Use, std::move(W)});
    ++Scheduled;
  }
  if (!Scheduled)
    return 0;
  llvm::stable_sort(Waits, [](const auto &A, const auto &B) { return A.first < B.first; });
  // Grow the table once and fill it from the back, so no second table is
  // built: op I moves to I + (waits placed before it).
  Ops.resize(N + Waits.size());
  size_t W = N + Waits.size();
  size_t K = Waits.size();
  for (size_t I = N + 1; I-- > 0;) {
    // Ops before the first wait stay where they are; a self-move would
    // empty their std::vector members (an all_to_all_v's splits).
    if (I != N && --W != I)
      Ops[W] = std::move(Ops[I]);
    for (; K != 0 && Waits[K - 1].first == I; --K)
      Ops[--W] = std::move(Waits[K - 1].second);
  }
  assert(W == 0 && "every op and wait placed");
  P.recomputeDefs();
  return Scheduled;
}

Expected<unsigned> SchedulePass::chooseDepth(const Program &P, PassContext &Ctx) {
  size_t Units = countPrefetchUnits(P);
  std::vector<unsigned> Depths;
  for (unsigned D = 1; D < Units; D = D < 4 ? D + 1 : D + D / 2)
    Depths.push_back(D);
  Depths.push_back(0); // unbounded
  BufferLayoutOptions Layout = Ctx.Layout.value_or(BufferLayoutOptions());
  // The shortest step within the budget; and the least peak, for the error.
  std::optional<unsigned> Best;
  double BestUs = 0;
  uint64_t BestBytes = 0;
  std::unique_ptr<Program> Least;
  PeakMemory LeastPeak;
  unsigned LeastDepth = 0;
  for (unsigned D : Depths) {
    std::unique_ptr<Program> C = P.clone();
    boundPrefetch(*C, D);
    launchAsync(*C);
    PeakMemory Peak = programPeakMemory(*C, Layout);
    if (Peak.Bytes > Opts.Budget) {
      if (!Least || Peak.Bytes < LeastPeak.Bytes) {
        Least = std::move(C);
        LeastPeak = Peak;
        LeastDepth = D;
      }
      continue;
    }
    SimOptions Sim;
    Sim.Link = Opts.Link;
    Expected<SimResult> R = simulateStep(*C, Sim);
    if (!R)
      return R.takeError();
    // A step shorter by less than a microsecond is not worth more memory.
    constexpr double SameUs = 1.0;
    if (!Best || R->StepUs < BestUs - SameUs ||
        (R->StepUs <= BestUs + SameUs && Peak.Bytes < BestBytes)) {
      Best = D;
      BestUs = R->StepUs;
      BestBytes = Peak.Bytes;
    }
  }
  if (Best)
    return *Best;
  // No depth fits: say where the least demanding schedule peaks.
  SMLoc Loc = LeastPeak.Source ? Least->ops()[*LeastPeak.Source].Loc : SMLoc();
  Ctx.Diags.error(Loc, formatv("memory budget of {0} bytes cannot be met: the least peak "
                               "communication memory per rank ({1}) is {2} bytes ({3} tensor{4} "
                               "+ {5} bytes staging), reached at this op's launch on rank {6}",
                               Opts.Budget,
                               LeastDepth ? formatv("prefetch={0}", LeastDepth).str()
                                          : std::string("unbounded prefetch"),
                               LeastPeak.Bytes, LeastPeak.Tensors,
                               LeastPeak.Tensors == 1 ? "" : "s", LeastPeak.StagingBytes,
                               LeastPeak.Rank)
                           .str());
  return Ctx.Diags.takeError("schedule");
}

Expected<bool> SchedulePass::run(Program &P, PassContext &Ctx) {
  unsigned Depth = Opts.Prefetch;
  std::string How = formatv("prefetch={0}", Depth);
  if (Opts.Budget) {
    Expected<unsigned> D = chooseDepth(P, Ctx);
    if (!D)
      return D.takeError();
    Depth = *D;
    How = formatv("memory-budget={0} chose prefetch={1} on {2}", Opts.Budget, Depth,
                  Opts.Link.Name);
  }
  int64_t Moved = boundPrefetch(P, Depth, How);
  int64_t Scheduled = launchAsync(P);
  if (!Scheduled)
    return false;
  Ctx.addStat("schedule", "async-collectives", Scheduled);
  Ctx.addStat("schedule", "prefetch-bounded", Moved);
  return true;
}

} // namespace

Expected<std::unique_ptr<Pass>> createSchedulePass(PassOptions &Opts) {
  ScheduleOptions S;
  Expected<uint64_t> Prefetch =
      Opts.getUInt("prefetch", FsdpDefaultPrefetch,
                   "parameter gathers' units in flight (FSDP's default 2; 0: unbounded)");
  if (!Prefetch)
    return Prefetch.takeError();
  Expected<uint64_t> Budget = Opts.getBytes(
      "memory-budget", 0, "peak communication memory per rank to stay within (0: none)");
  if (!Budget)
    return Budget.takeError();
  Expected<std::string> Link =
      Opts.getString("link", defaultLinkClass().Name, "memory-budget: the link class to simulate");
  if (!Link)
    return Link.takeError();
  if (Error E = Opts.finish())
    return E;
  if (*Prefetch > 1u << 20)
    return createStringError(inconvertibleErrorCode(),
                             "schedule{prefetch=%llu}: expected 0..1048576",
                             (unsigned long long)*Prefetch);
  Expected<LinkClass> L = findLinkClass(*Link);
  if (!L)
    return L.takeError();
  S.Prefetch = unsigned(*Prefetch);
  S.Budget = *Budget;
  S.Link = *L;
  return std::make_unique<SchedulePass>(std::move(S));
}

} // namespace collc
