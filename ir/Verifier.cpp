//===- ir/Verifier.cpp - Program well-formedness --------------------------===//
//
// Rank-independent ops (no predicate, a group that covers the world, no
// rank in their expressions) are checked once; the rest once per rank, so
// a million-op data-parallel program costs one pass over the ops.
//
//===----------------------------------------------------------------------===//

#include "ir/Verifier.h"

#include "ir/RankMasks.h"
#include "ir/TypeInference.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace llvm;

namespace collc {

namespace {

class Verifier {
public:
  Verifier(const Program &P, DiagnosticEngine &D) : P(P), Diags(D) {}
  void run();

private:
  void verifyOp(OpId I);
  void verifyTypes(const Op &O);
  void verifyAllToAllV(const Op &O);
  void verifyPerRank(OpId I);
  void verifyUses(OpId I);
  void verifyAsync(OpId I);
  void verifyBucket(const Op &O);
  /// p2p blocks: contiguous, of sends and recvs that are not async, none
  /// sending what the block receives.
  void verifyBatch(OpId I);
  /// The ranks op \p I runs on; null means every rank.
  const BitVector *execMask(OpId I) const { return Masks->mask(I); }
  SMLoc locOf(const RankExpr *E, const Op &O) const {
    return E && E->loc().isValid() ? E->loc() : O.Loc;
  }
  void errorAt(SMLoc Loc, const Twine &Msg) { Diags.error(Loc, Msg); }
  std::string name(ValueId V) const { return ("%" + P.value(V).Name).str(); }

  const Program &P;
  DiagnosticEngine &Diags;
  std::unique_ptr<RankMasks> Masks;
  // Async bookkeeping, per value.
  enum AsyncState : uint8_t { NotAsync, Pending, PendingReported, Waited };
  std::vector<AsyncState> Async;
  std::vector<OpId> WaitedBy;
  /// p2p blocks already ended (a later op in one breaks contiguity).
  DenseSet<uint32_t> ClosedBatches;
};

void Verifier::verifyTypes(const Op &O) {
  if (!hasInferredResultTypes(O.Kind))
    return;
  if (O.Operands.size() != O.Results.size() || O.Results.empty()) {
    errorAt(O.Loc, formatv("{0} has {1} operands but {2} results; each operand has one result",
                           opKindName(O.Kind), O.Operands.size(), O.Results.size()));
    return;
  }
  for (unsigned I = 0; I != O.Results.size(); ++I) {
    Expected<TensorType> Want = inferResultType(P, O, I);
    if (!Want) {
      errorAt(O.Loc, toString(Want.takeError()));
      continue;
    }
    const TensorType &Have = P.value(O.Results[I]).Type;
    if (Have != *Want)
      errorAt(O.Loc,
              formatv("result {0} of {1} has type {2}, but {1} of {3} : {4} in @{5} "
                      "gives {6}",
                      name(O.Results[I]), opKindName(O.Kind), Have.str(), name(O.Operands[I]),
                      P.value(O.Operands[I]).Type.str(), P.group(O.Group).Name, Want->str()));
  }
}

void Verifier::verifyAllToAllV(const Op &O) {
  ArrayRef<ValueId> Data = O.dataOperands();
  if (Data.size() != O.Results.size() || Data.empty()) {
    errorAt(O.Loc, formatv("all_to_all_v has {0} data operands but {1} results", Data.size(),
                           O.Results.size()));
    return;
  }
  const Group &G = P.group(O.Group);
  int64_t N = G.uniformSize();
  if (N < 0) {
    errorAt(O.Loc, "all_to_all_v needs a group whose subgroups have one size; @" + G.Name +
                       " has subgroups of different sizes");
    return;
  }
  int64_t InRows = -1, OutRows = -1;
  for (unsigned I = 0; I != Data.size(); ++I) {
    const TensorType &In = P.value(Data[I]).Type;
    const TensorType &Out = P.value(O.Results[I]).Type;
    if (In.Shape.empty() || Out.Shape.empty() || In.Elem != Out.Elem ||
        ArrayRef<int64_t>(In.Shape).drop_front() != ArrayRef<int64_t>(Out.Shape).drop_front()) {
      errorAt(O.Loc, formatv("all_to_all_v moves rows of dimension 0: result {0} : {1} must "
                             "have the element type and trailing dimensions of {2} : {3}",
                             name(O.Results[I]), Out.str(), name(Data[I]), In.str()));
      return;
    }
    if (I == 0) {
      InRows = In.Shape[0];
      OutRows = Out.Shape[0];
    } else if (In.Shape[0] != InRows || Out.Shape[0] != OutRows) {
      errorAt(O.Loc, "the operands of a fused all_to_all_v share split sizes, so they need the "
                     "same dimension 0");
      return;
    }
  }
  if (O.HasCountsOperand) {
    const TensorType &C = P.value(O.countsOperand()).Type;
    if (isFloatType(C.Elem) || C.Shape.size() != 1 || C.Shape[0] != N)
      errorAt(O.Loc, formatv("split sizes {0} : {1} must be an integer vector with one entry "
                             "per rank of @{2}, such as i64[{3}]",
                             name(O.countsOperand()), C.str(), G.Name, N));
    return;
  }
  if (int64_t(O.Splits.size()) != N * N) {
    errorAt(O.Loc, formatv("the split matrix has {0} entries but @{1} has {2} ranks, so it "
                           "needs {2} x {2}",
                           O.Splits.size(), G.Name, N));
    return;
  }
  for (int64_t S = 0; S != N; ++S) {
    // Entries come from the file: sums that would pass 2^63-1 saturate
    // there, which is past any tensor's rows, instead of wrapping negative.
    int64_t Sent = 0, Received = 0;
    for (int64_t D = 0; D != N; ++D) {
      Sent = checkedAdd(Sent, O.Splits[S * N + D]).getValueOr(INT64_MAX);
      Received = checkedAdd(Received, O.Splits[D * N + S]).getValueOr(INT64_MAX);
    }
    if (Sent > InRows)
      errorAt(O.Loc, formatv("rank {0} of @{1} sends {2} rows in all, more than the {3} rows of "
                             "{4}",
                             S, G.Name, Sent, InRows, name(Data[0])));
    if (Received > OutRows)
      errorAt(O.Loc, formatv("rank {0} of @{1} receives {2} rows in all, more than the capacity "
                             "{3} of {4}",
                             S, G.Name, Received, OutRows, name(O.Results[0])));
  }
}

void Verifier::verifyPerRank(OpId I) {
  const Op &O = P.ops()[I];
  if (!O.Peer)
    return;
  bool IsRoot = hasRoot(O.Kind);
  const BitVector *Mask = execMask(I);
  for (int64_t R = 0; R != P.worldSize(); ++R) {
    if (Mask && !Mask->test(R))
      continue;
    Expected<int64_t> V = O.Peer->evaluate(R, P.worldSize());
    if (!V) {
      handleAllErrors(V.takeError(), [&](const RankExprError &E) {
        errorAt(E.Loc.isValid() ? E.Loc : O.Loc,
                formatv("{0} of {1} cannot be evaluated on rank {2}: {3}", IsRoot ? "root" : "peer",
                        opKindName(O.Kind), R, E.Msg));
      });
      return;
    }
    int64_t Size = P.worldSize(), Self = R;
    StringRef Where = "the world";
    std::string GroupDesc;
    if (O.Group != InvalidId) {
      const Group &G = P.group(O.Group);
      Size = G.sizeOn(R);
      Self = G.localRank(R);
      GroupDesc = ("@" + G.Name).str();
      Where = GroupDesc;
    }
    if (*V < 0 || *V >= Size) {
      errorAt(locOf(O.Peer, O), formatv("{0} {1} is not in 0..{2} on rank {3} ({4} has {5} "
                                        "ranks there)",
                                        IsRoot ? "root" : "peer", *V, Size - 1, R, Where, Size));
      return;
    }
    if (!IsRoot && *V == Self) {
      errorAt(locOf(O.Peer, O),
              formatv("rank {0} {1} itself (peer {2} in {3})", R,
                      O.Kind == OpKind::Send ? "sends to" : "receives from", *V, Where));
      return;
    }
  }
}

void Verifier::verifyUses(OpId I) {
  const Op &O = P.ops()[I];
  const BitVector *UseMask = execMask(I);
  for (ValueId V : O.Operands) {
    if (V >= P.numValues()) {
      errorAt(O.Loc, formatv("{0} uses value #{1}, which does not exist", opKindName(O.Kind), V));
      continue;
    }
    OpId Def = P.value(V).Def;
    if (Def == InvalidId || Def >= I) {
      errorAt(O.Loc, formatv("{0} is used before it is defined", name(V)));
      continue;
    }
    const BitVector *DefMask = execMask(Def);
    if (!DefMask)
      continue;
    // The first rank where the op runs but the value was not produced.
    int64_t Missing = -1;
    for (int64_t R = 0; R != P.worldSize(); ++R)
      if ((!UseMask || UseMask->test(R)) && !DefMask->test(R)) {
        Missing = R;
        break;
      }
    if (Missing < 0)
      continue;
    errorAt(O.Loc, formatv("{0} is used on rank {1}, where it is not defined (its defining {2} "
                           "does not run there)",
                           name(V), Missing, opKindName(P.ops()[Def].Kind)));
    Diags.note(P.ops()[Def].Loc, formatv("{0} is defined here", name(V)));
  }
}

void Verifier::verifyAsync(OpId I) {
  const Op &O = P.ops()[I];
  if (O.Kind == OpKind::Wait) {
    if (O.Operands.empty())
      errorAt(O.Loc, "wait needs at least one value");
    for (ValueId V : O.Operands) {
      if (V >= P.numValues())
        continue;
      if (Async[V] == NotAsync) {
        errorAt(O.Loc, formatv("wait on {0}, which is not the result of an async op", name(V)));
      } else if (Async[V] == Waited) {
        errorAt(O.Loc, formatv("{0} is waited for twice", name(V)));
        Diags.note(P.ops()[WaitedBy[V]].Loc, "first wait is here");
      } else {
        Async[V] = Waited;
        WaitedBy[V] = I;
      }
    }
    return;
  }
  for (ValueId V : O.Operands)
    if (V < P.numValues() && P.value(V).IsToken)
      errorAt(O.Loc, formatv("{0} is a send's token: only `wait` takes it", name(V)));
    else if (V < P.numValues() && Async[V] == Pending) {
      errorAt(O.Loc, formatv("{0} is used before its `wait`: an async collective's result is "
                             "ready only after it is waited for",
                             name(V)));
      Async[V] = PendingReported; // once is enough
    }
  if (O.Async) {
    if (!isCommunication(O.Kind) || O.Results.empty())
      errorAt(O.Loc, opKindName(O.Kind) + " cannot be async");
    for (ValueId R : O.Results)
      if (R < P.numValues())
        Async[R] = Pending;
  }
}

void Verifier::verifyOp(OpId I) {
  const Op &O = P.ops()[I];
  for (ValueId R : O.Results)
    if (R >= P.numValues() || P.value(R).Def != I)
      errorAt(O.Loc, formatv("{0} does not record this op as its definition",
                             R < P.numValues() ? name(R) : "a result"));
  bool NeedsGroup = isCollective(O.Kind);
  if (NeedsGroup && (O.Group == InvalidId || O.Group >= P.groups().size())) {
    errorAt(O.Loc, opKindName(O.Kind) + " needs a group (`in @group`)");
    return;
  }
  switch (O.Kind) {
  case OpKind::Compute:
    if (O.CostNs < 0)
      errorAt(O.Loc, formatv("cost {0}ns is negative", O.CostNs));
    break;
  case OpKind::Broadcast:
    if (!O.Peer)
      errorAt(O.Loc, "broadcast needs a root");
    [[fallthrough]];
  case OpKind::AllReduce:
  case OpKind::AllGather:
  case OpKind::ReduceScatter:
  case OpKind::AllToAll:
    verifyTypes(O);
    if (hasReduceOp(O.Kind))
      if (takesScale(O.Reduce) && !std::isfinite(O.Scale))
        errorAt(O.Loc, "premul_sum scale is not a finite number");
    break;
  case OpKind::AllToAllV:
    verifyAllToAllV(O);
    break;
  case OpKind::Send:
  case OpKind::Recv:
    if (!O.Peer)
      errorAt(O.Loc, opKindName(O.Kind) + " needs a peer");
    if (O.Kind == OpKind::Send && O.Operands.size() != 1)
      errorAt(O.Loc, "send takes one value");
    if (O.Kind == OpKind::Recv && (O.Results.size() != 1 || !O.Operands.empty()))
      errorAt(O.Loc, "recv takes no operands and produces one value");
    break;
  case OpKind::Barrier:
  case OpKind::Wait:
    break;
  }
  verifyBucket(O);
  verifyBatch(I);
  verifyPerRank(I);
  verifyUses(I);
  verifyAsync(I);
}

void Verifier::verifyBucket(const Op &O) {
  const Attribute *B = O.getAttr("bucket");
  if (!B)
    return;
  // A bucket holds distinct tensors: each has one slot in its buffer, and a
  // second gather of a shard is needed later (its own collective).
  SmallVector<ValueId, 8> Seen(O.dataOperands().begin(), O.dataOperands().end());
  llvm::sort(Seen);
  auto Twice = std::adjacent_find(Seen.begin(), Seen.end());
  if (Twice != Seen.end())
    errorAt(O.Loc, formatv("bucket {0} moves {1} twice; a bucket holds distinct tensors",
                           B->IsString ? B->Str.str() : std::to_string(B->Int), name(*Twice)));
}

void Verifier::verifyBatch(OpId I) {
  const Op &O = P.ops()[I];
  uint32_t Prev = I ? P.ops()[I - 1].Batch : InvalidId;
  if (Prev != InvalidId && Prev != O.Batch)
    ClosedBatches.insert(Prev);
  if (O.Batch == InvalidId)
    return;
  if (O.Kind != OpKind::Send && O.Kind != OpKind::Recv) {
    errorAt(O.Loc, opKindName(O.Kind) + " cannot be issued in a p2p block: only send and recv can");
    return;
  }
  if (O.Async)
    errorAt(O.Loc, opKindName(O.Kind) + " in a p2p block cannot be async: every op of the block "
                                        "completes at its end");
  if (ClosedBatches.contains(O.Batch))
    errorAt(O.Loc, "the ops of a p2p block must be contiguous, but this one follows another op "
                   "that is outside its block");
  for (ValueId V : O.Operands)
    if (V < P.numValues() && P.value(V).Def < I && P.ops()[P.value(V).Def].Batch == O.Batch)
      errorAt(O.Loc, formatv("{0} is received in the same p2p block: it is ready only at the "
                             "block's end",
                             name(V)));
}

void Verifier::run() {
  const auto &Ops = P.ops();
  Masks = std::make_unique<RankMasks>(P, [&](OpId I, int64_t R, const RankExprError &E) {
    errorAt(E.Loc.isValid() ? E.Loc : Ops[I].Loc,
            formatv("`when` predicate of {0} cannot be evaluated on rank {1}: {2}",
                    opKindName(Ops[I].Kind), R, E.Msg));
  });
  Async.assign(P.numValues(), NotAsync);
  WaitedBy.assign(P.numValues(), InvalidId);
  for (OpId I = 0; I != Ops.size(); ++I)
    verifyOp(I);
  for (ValueId V = 0; V != P.numValues(); ++V)
    if (Async[V] == Pending || Async[V] == PendingReported) {
      errorAt(P.ops()[P.value(V).Def].Loc,
              formatv("{0} is the result of an async {1} that is never waited for", name(V),
                      opKindName(P.ops()[P.value(V).Def].Kind)));
    }
}

} // namespace

Error verifyProgram(const Program &P, DiagnosticEngine &Diags) {
  unsigned Before = Diags.numErrors();
  if (P.worldSize() < 1 || P.worldSize() > MaxWorldSize) {
    Diags.error({}, formatv("world size {0} is not in 1..{1}", P.worldSize(), MaxWorldSize));
    return Diags.takeError("verify");
  }
  // Before anything asks the groups about their ranks.
  if (std::optional<GroupBudgetExcess> X = checkGroupTableBudget(P, GroupsNeeded::UsedByOps)) {
    Diags.error(X->Loc, X->Msg);
    return Diags.takeError("verify");
  }
  Verifier(P, Diags).run();
  if (Diags.numErrors() == Before)
    return Error::success();
  return Diags.takeError("verify");
}

} // namespace collc
