//===- passes/Schedule.cpp - Overlap communication with compute ------------===//
//
// Requires: a verified program, best after `order` (which puts each
// collective right after its last producer). Ensures: every collective
// (not barrier) is `async`: it launches where it stands, on the comm
// stream, and a `wait` for all its results sits right before the first op
// that uses one of them (or at the end of the program when none does).
// Compute ops stay on their compute streams, in their order.
// Across ranks: waits do not communicate, so no rank's sequence of
// communication changes.
//
// The decision is the program itself: the async op stands where it launches
// and its `wait` where the result is first needed (the plan dump names both).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

using namespace llvm;

namespace collc {

namespace {

class SchedulePass : public Pass {
public:
  StringRef name() const override { return "schedule"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override;
};

Expected<bool> SchedulePass::run(Program &P, PassContext &Ctx) {
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
    return false;
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
  Ctx.addStat("schedule", "async-collectives", Scheduled);
  return true;
}

} // namespace

Expected<std::unique_ptr<Pass>> createSchedulePass(PassOptions &Opts) {
  if (Error E = Opts.finish())
    return E;
  return std::make_unique<SchedulePass>();
}

} // namespace collc
