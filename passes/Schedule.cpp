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
// pass chooses each unit's depth instead (PrefetchSearch.h), as XLA's
// latency-hiding scheduler hoists while it tracks memory pressure: the best
// uniform depth, then unit by unit one earlier or later while the simulated
// step (on `link`) gets shorter, or as short with less memory, and the peak
// communication memory per rank (analysis/PeakMemory.h) stays within the
// budget; a budget nothing meets is a located error with the figures.
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
#include "passes/PrefetchSearch.h"
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

Expected<bool> SchedulePass::run(Program &P, PassContext &Ctx) {
  int64_t Moved = 0;
  if (!Opts.Budget) {
    Moved = boundPrefetch(P, Opts.Prefetch, formatv("prefetch={0}", Opts.Prefetch).str());
  } else {
    PrefetchSearchOptions Search;
    Search.Budget = Opts.Budget;
    Search.Link = Opts.Link;
    // The pipeline's layout (set before any pass runs): the plan's buffers.
    Search.Layout = Ctx.Layout.value_or(BufferLayoutOptions());
    auto Launch = [](Program &C) { launchAsync(C); };
    Search.LaunchAsync = Launch;
    Expected<PrefetchChoice> Choice = searchPrefetch(P, Search);
    if (!Choice)
      return Choice.takeError();
    if (!Choice->Fits) {
      // No schedule fits: say where the least demanding one peaks.
      const PeakMemory &Least = Choice->LeastPeak;
      SMLoc Loc = Least.Source ? Choice->Least->ops()[*Least.Source].Loc : SMLoc();
      Ctx.Diags.error(Loc, formatv("memory budget of {0} bytes cannot be met: the least peak "
                                   "communication memory per rank ({1}) is {2} bytes ({3} "
                                   "tensor{4} + {5} bytes staging), reached at this op's launch "
                                   "on rank {6}",
                                   Opts.Budget,
                                   Choice->LeastDepth
                                       ? formatv("prefetch={0}", Choice->LeastDepth).str()
                                       : std::string("unbounded prefetch"),
                                   Least.Bytes, Least.Tensors, Least.Tensors == 1 ? "" : "s",
                                   Least.StagingBytes, Least.Rank)
                               .str());
      return Ctx.Diags.takeError("schedule");
    }
    Ctx.addMemoryBudget("schedule", Opts.Budget);
    std::string Chose = formatv("memory-budget={0} chose prefetch={1} on {2}", Opts.Budget,
                                Choice->Uniform, Opts.Link.Name);
    Moved = boundPrefetch(
        P, Choice->DepthOfUnit,
        [&](size_t K) {
          const std::string &Why = Choice->WhyOfUnit[K];
          return Why.empty() ? Chose : Chose + "; this unit: " + Why;
        },
        /*WhyUnmoved=*/true);
    Ctx.addStat("schedule", "prefetch-units-chosen-apart", Choice->UnitsChanged);
    Ctx.addStat("schedule", "prefetch-simulations", Choice->Simulations);
  }
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
