//===- passes/Prefetch.cpp - FSDP-style bounded prefetch of gathers --------===//

#include "passes/Prefetch.h"

#include "passes/Combine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

/// A joint gather stays where it stands, as its partners do.
bool isPrefetchable(const Op &O) {
  return O.Kind == OpKind::AllGather && !O.Async && !O.isJoint();
}

/// Per op, the compute that first uses one of its results (InvalidId: none,
/// or the first use is not a compute).
std::vector<OpId> firstComputeUse(const Program &P) {
  const std::vector<Op> &Ops = P.ops();
  std::vector<OpId> FirstUse(P.numValues(), InvalidId);
  for (OpId I = Ops.size(); I-- > 0;)
    for (ValueId V : Ops[I].Operands)
      FirstUse[V] = I;
  std::vector<OpId> Out(Ops.size(), InvalidId);
  for (OpId I = 0; I != Ops.size(); ++I) {
    OpId Use = InvalidId;
    for (ValueId V : Ops[I].Results)
      Use = std::min(Use, FirstUse[V]);
    if (Use != InvalidId && Ops[Use].Kind == OpKind::Compute)
      Out[I] = Use;
  }
  return Out;
}

/// The units (computes that first need a prefetchable gather), in program
/// order, and each op's unit index (-1: not a unit).
std::vector<OpId> unitsOf(const Program &P, ArrayRef<OpId> Need, std::vector<int64_t> &UnitIndex) {
  const std::vector<Op> &Ops = P.ops();
  UnitIndex.assign(Ops.size(), -1);
  for (OpId I = 0; I != Ops.size(); ++I)
    if (isPrefetchable(Ops[I]) && Need[I] != InvalidId)
      UnitIndex[Need[I]] = 0;
  std::vector<OpId> Units;
  for (OpId I = 0; I != Ops.size(); ++I)
    if (UnitIndex[I] == 0) {
      UnitIndex[I] = Units.size();
      Units.push_back(I);
    }
  return Units;
}

} // namespace

size_t countPrefetchUnits(const Program &P) {
  std::vector<int64_t> UnitIndex;
  return unitsOf(P, firstComputeUse(P), UnitIndex).size();
}

int64_t boundPrefetch(Program &P, unsigned Depth, StringRef How) {
  if (Depth == 0)
    return 0;
  std::vector<unsigned> Depths(countPrefetchUnits(P), Depth);
  return boundPrefetch(P, Depths, [&](size_t) { return How.str(); });
}

int64_t boundPrefetch(Program &P, ArrayRef<unsigned> DepthOfUnit,
                      function_ref<std::string(size_t Unit)> HowOfUnit, bool WhyUnmoved) {
  std::vector<Op> &Ops = P.ops();
  size_t N = Ops.size();
  std::vector<OpId> Need = firstComputeUse(P);
  std::vector<int64_t> UnitIndex;
  std::vector<OpId> Units = unitsOf(P, Need, UnitIndex);
  assert(DepthOfUnit.size() == Units.size() && "one depth per unit");
  // The first send/recv/barrier/wait (or joint collective) at or after each
  // position.
  std::vector<OpId> NextBarrier(N + 1, N);
  for (OpId I = N; I-- > 0;)
    NextBarrier[I] = isOrderBarrier(Ops[I]) ? I : NextBarrier[I + 1];

  // Target[I]: the op that gather I now follows (InvalidId: it stays).
  std::vector<OpId> Target(N, InvalidId);
  int64_t Moved = 0;
  for (OpId I = 0; I != N; ++I) {
    if (!isPrefetchable(Ops[I]) || Need[I] == InvalidId)
      continue;
    int64_t K = UnitIndex[Need[I]];
    unsigned Depth = DepthOfUnit[K];
    std::string How = HowOfUnit(K);
    auto Record = [&](std::string Why) {
      if (!How.empty())
        Why += " (" + How + ")";
      Ops[I].setAttr("prefetch_why", P.save(Why));
    };
    if (Depth == 0 || K < int64_t(Depth)) {
      if (WhyUnmoved)
        Record(formatv("needed by {0}; launched where its shard is ready, as early as it can",
                       describeOp(P, Ops[Need[I]]))
                   .str());
      continue;
    }
    OpId After = Units[K - Depth];
    // Never across a send, recv, barrier or wait.
    bool Clamped = NextBarrier[I] < After;
    if (Clamped)
      After = NextBarrier[I] - 1;
    if (After <= I) {
      if (WhyUnmoved)
        Record(formatv("needed by {0}; launched where it stands, already no earlier than {1} "
                       "unit{2} ahead",
                       describeOp(P, Ops[Need[I]]), Depth, Depth == 1 ? "" : "s")
                   .str());
      continue;
    }
    Target[I] = After;
    Ops[I].Fenced = true;
    Record(formatv("needed by {0}; launched after {1}, {2}", describeOp(P, Ops[Need[I]]),
                   describeOp(P, Ops[After]),
                   Clamped ? std::string("before the send, recv, barrier or wait that follows it")
                           : formatv("{0} unit{1} ahead", Depth, Depth == 1 ? "" : "s").str())
               .str());
    ++Moved;
  }
  if (!Moved)
    return 0;
  // Gathers that follow each op, in their program order.
  std::vector<std::vector<OpId>> Following(N);
  for (OpId I = 0; I != N; ++I)
    if (Target[I] != InvalidId)
      Following[Target[I]].push_back(I);
  std::vector<Op> Out;
  Out.reserve(N);
  for (OpId I = 0; I != N; ++I) {
    if (Target[I] == InvalidId)
      Out.push_back(std::move(Ops[I]));
    for (OpId G : Following[I])
      Out.push_back(std::move(Ops[G]));
  }
  Ops = std::move(Out);
  P.recomputeDefs();
  return Moved;
}

} // namespace collc
