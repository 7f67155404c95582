//===- passes/Order.cpp - One issue order for every rank -------------------===//
//
// Requires: a verified program. Ensures: every collective sits right after
// the op that makes its last input ready, and the program order is a
// function of the dataflow alone, so every rank (and every equivalent
// input) gets the same order.
//
// The rule. The skeleton (compute ops, and the ops that pin communication:
// send, recv, barrier, wait, joint collectives) keeps its order: it is the model's execution
// order. Every other collective is anchored to the latest of
//  - the skeleton op that produces its last-ready operand (through other
//    collectives it depends on), and
//  - the last send, recv, barrier, wait or joint collective before it
//    (communication never moves across those; that keeps point-to-point
//    pairs deadlock-free, and the ops of a joint collective, which other
//    ranks pair by where each rank issues them, where they meet),
// and placed right after its anchor. Collectives with the same anchor are
// ordered by: chain depth (a collective of a collective's result comes
// after it), then the skeleton op that first needs their results (the
// earliest needed first: FSDP's forward gathers before its backward
// re-gathers of the same shards), then which result of the anchor they wait for (the source
// position of the value), then group declaration order, kind and result
// name. The position of the collective itself in the input never matters,
// so permuting independent collectives gives the same program.
// Across ranks: a single rewrite of the one program; collectives only move
// earlier within a span between point-to-point ops, where each is one
// rendezvous of its group, so no rank's order can deadlock another's.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/Combine.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

/// A joint collective stays where it stands: its partners, issued by other
/// ranks, pair with it by where each rank issues it.
bool isMovable(const Op &O) {
  return isCollective(O.Kind) && O.Kind != OpKind::Barrier && !O.isJoint();
}

class OrderPass : public Pass {
public:
  StringRef name() const override { return "order"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override;
};

struct Placement {
  int64_t Anchor = -1;      // skeleton index; -1: before every skeleton op
  int64_t Depth = 0;        // chain length from the anchor through collectives
  int64_t ResultIndex = -1; // which result of the anchor it waits for
};

/// The skeleton: the ops that keep their order, and each op's index in it
/// (-1 for a movable op).
struct Skeleton {
  std::vector<OpId> Ops;
  std::vector<int64_t> IndexOf;
};

Skeleton findSkeleton(const std::vector<Op> &Ops) {
  Skeleton S;
  S.IndexOf.assign(Ops.size(), -1);
  for (OpId I = 0; I != Ops.size(); ++I)
    if (!isMovable(Ops[I])) {
      S.IndexOf[I] = S.Ops.size();
      S.Ops.push_back(I);
    }
  return S;
}

/// The placement of each movable op, in program order (operands come
/// first): its anchor, chain depth and the anchor's result it waits for.
std::vector<Placement> placeMovable(const Program &P, const Skeleton &Sk) {
  const std::vector<Op> &Ops = P.ops();
  std::vector<Placement> Place(Ops.size());
  int64_t LastBarrier = -1;
  for (OpId I = 0; I != Ops.size(); ++I) {
    const Op &O = Ops[I];
    if (!isMovable(O)) {
      if (isOrderBarrier(O))
        LastBarrier = Sk.IndexOf[I];
      continue;
    }
    Placement Pl;
    Pl.Anchor = LastBarrier;
    for (ValueId V : O.Operands) {
      OpId Def = P.value(V).Def;
      const Op &D = Ops[Def];
      Placement From;
      if (isMovable(D)) {
        From = Place[Def];
        From.Depth += 1;
        From.ResultIndex = -1;
      } else {
        From.Anchor = Sk.IndexOf[Def];
        From.ResultIndex = llvm::find(D.Results, V) - D.Results.begin();
      }
      if (From.Anchor > Pl.Anchor) {
        Pl = From;
      } else if (From.Anchor == Pl.Anchor) {
        Pl.Depth = std::max(Pl.Depth, From.Depth);
        Pl.ResultIndex = std::max(Pl.ResultIndex, From.ResultIndex);
      }
    }
    Place[I] = Pl;
  }
  return Place;
}

constexpr int64_t NeverNeeded = INT64_MAX;

/// The skeleton op that first needs each movable op's results, through
/// chains of collectives; users come after their producers, so one
/// backward sweep settles it.
std::vector<int64_t> firstNeeds(const Program &P, const Skeleton &Sk) {
  const std::vector<Op> &Ops = P.ops();
  std::vector<int64_t> Need(Ops.size(), NeverNeeded);
  for (OpId U = Ops.size(); U-- > 0;) {
    int64_t At = isMovable(Ops[U]) ? Need[U] : Sk.IndexOf[U];
    for (ValueId V : Ops[U].Operands) {
      OpId Def = P.value(V).Def;
      if (Def != InvalidId && isMovable(Ops[Def]))
        Need[Def] = std::min(Need[Def], At);
    }
  }
  return Need;
}

/// A movable op with its sort keys copied next to it: sorting a million ops
/// of one anchor by chasing Place, Ops and value names was cache-bound (22x
/// the time of 100k).
struct Keyed {
  int64_t Depth, Need, ResultIndex;
  GroupId Group;
  OpKind Kind;
  /// The name's first 8 bytes, big-endian and zero-padded: it orders as the
  /// name does wherever the two differ there, so the full compare runs only
  /// on ties.
  uint64_t NamePrefix;
  StringRef Name;
  OpId Op;
  bool operator<(const Keyed &O) const {
    return std::tie(Depth, Need, ResultIndex, Group, Kind, NamePrefix, Name) <
           std::tie(O.Depth, O.Need, O.ResultIndex, O.Group, O.Kind, O.NamePrefix, O.Name);
  }
};

uint64_t prefixOf(StringRef Name) {
  uint64_t X = 0;
  for (size_t K = 0; K != 8; ++K)
    X = X << 8 | (K < Name.size() ? uint8_t(Name[K]) : 0);
  return X;
}

/// The new order: the movable ops bucketed by anchor, each bucket sorted by
/// the rule and placed right after its anchor.
std::vector<OpId> newOrder(const Program &P, const Skeleton &Sk,
                           const std::vector<Placement> &Place,
                           const std::vector<int64_t> &Need) {
  const std::vector<Op> &Ops = P.ops();
  std::vector<std::vector<Keyed>> ByAnchor(Sk.Ops.size() + 1);
  for (OpId I = 0; I != Ops.size(); ++I)
    if (isMovable(Ops[I])) {
      const Placement &Pl = Place[I];
      StringRef Name = P.value(Ops[I].Results.front()).Name;
      ByAnchor[Pl.Anchor + 1].push_back(
          {Pl.Depth, Need[I], Pl.ResultIndex, Ops[I].Group, Ops[I].Kind, prefixOf(Name), Name, I});
    }
  for (auto &List : ByAnchor)
    llvm::sort(List);
  std::vector<OpId> Order;
  Order.reserve(Ops.size());
  auto Append = [&](const std::vector<Keyed> &List) {
    for (const Keyed &K : List)
      Order.push_back(K.Op);
  };
  Append(ByAnchor[0]);
  for (size_t S = 0; S != Sk.Ops.size(); ++S) {
    Order.push_back(Sk.Ops[S]);
    Append(ByAnchor[S + 1]);
  }
  return Order;
}

/// Applies the permutation in place, cycle by cycle: position K receives
/// the op at Order[K]. No second op table. Returns how many ops moved.
int64_t permute(std::vector<Op> &Ops, const std::vector<OpId> &Order) {
  size_t N = Ops.size();
  int64_t Count = 0;
  std::vector<uint8_t> Done(N, 0);
  for (size_t Start = 0; Start != N; ++Start) {
    if (Done[Start] || Order[Start] == Start) {
      Done[Start] = 1;
      continue;
    }
    Op Held = std::move(Ops[Start]);
    size_t K = Start;
    while (true) {
      Done[K] = 1;
      ++Count;
      size_t From = Order[K];
      if (From == Start) {
        Ops[K] = std::move(Held);
        break;
      }
      Ops[K] = std::move(Ops[From]);
      K = From;
    }
  }
  return Count;
}

Expected<bool> OrderPass::run(Program &P, PassContext &Ctx) {
  Skeleton Sk = findSkeleton(P.ops());
  std::vector<OpId> Order = newOrder(P, Sk, placeMovable(P, Sk), firstNeeds(P, Sk));
  bool Moved = false;
  for (size_t K = 0; K != Order.size(); ++K)
    Moved |= Order[K] != K;
  if (!Moved)
    return false;
  int64_t Count = permute(P.ops(), Order);
  P.recomputeDefs();
  Ctx.addStat("order", "ops-moved", Count);
  return true;
}

} // namespace

Expected<std::unique_ptr<Pass>> createOrderPass(PassOptions &Opts) {
  if (Error E = Opts.finish())
    return E;
  return std::make_unique<OrderPass>();
}

} // namespace collc
