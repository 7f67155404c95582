//===- passes/Combine.cpp - Merging collectives into one ------------------===//

#include "passes/Combine.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

using namespace llvm;

namespace collc {

CombineKey CombineKey::of(const Op &O) {
  return CombineKey{
      O.Kind, O.Reduce, takesScale(O.Reduce) ? O.Scale : 1.0, O.Group, O.Async,
      O.Peer, O.When,   O.Kind == OpKind::AllToAllV ? &O : nullptr};
}

bool CombineKey::operator==(const CombineKey &K) const {
  if (Kind != K.Kind || Group != K.Group || Async != K.Async)
    return false;
  if (hasReduceOp(Kind) && (Reduce != K.Reduce || Scale != K.Scale))
    return false;
  if (!RankExpr::equal(Root, K.Root) || !RankExpr::equal(When, K.When))
    return false;
  if (Kind == OpKind::AllToAllV) {
    const Op &A = *SplitsOf, &B = *K.SplitsOf;
    if (A.HasCountsOperand != B.HasCountsOperand)
      return false;
    if (A.HasCountsOperand ? A.countsOperand() != B.countsOperand() : A.Splits != B.Splits)
      return false;
  }
  return true;
}

hash_code CombineKey::hash() const {
  // Only what operator== compares exactly; the rank expressions are left out.
  hash_code H = hash_combine(Kind, Group, Async);
  if (Kind != OpKind::AllToAllV)
    return H;
  const Op &A = *SplitsOf;
  return A.HasCountsOperand ? hash_combine(H, A.countsOperand())
                            : hash_combine(H, hash_combine_range(A.Splits.begin(), A.Splits.end()));
}

bool isCombinable(const Op &O) {
  switch (O.Kind) {
  case OpKind::AllReduce:
  case OpKind::AllGather:
  case OpKind::ReduceScatter:
  case OpKind::Broadcast:
  case OpKind::AllToAll:
  case OpKind::AllToAllV:
    return true;
  default:
    return false;
  }
}

bool isOrderBarrier(OpKind K) {
  return K == OpKind::Send || K == OpKind::Recv || K == OpKind::Barrier || K == OpKind::Wait;
}

std::string describeOp(const Program &P, const Op &O) {
  std::string S;
  if (O.Kind == OpKind::Compute)
    S = ("compute @" + O.Callee).str();
  else if (!O.Results.empty())
    S = (opKindName(O.Kind) + " %" + P.value(O.Results.front()).Name).str();
  else if (!O.Operands.empty())
    S = (opKindName(O.Kind) + " %" + P.value(O.Operands.front()).Name).str();
  else
    S = opKindName(O.Kind).str();
  if (const SourceMgr *SM = P.sourceMgr())
    if (O.Loc.isValid())
      if (unsigned Buf = SM->FindBufferContainingLoc(O.Loc))
        S += formatv(" (line {0})", SM->getLineAndColumn(O.Loc, Buf).first).str();
  return S;
}

/// Moves the members out of \p Ops into one op (they are removed after).
static Op mergeMembers(std::vector<Op> &Ops, ArrayRef<OpId> Members) {
  Op M = std::move(Ops[Members.front()]);
  ValueId Counts = M.HasCountsOperand ? M.countsOperand() : InvalidId;
  if (M.HasCountsOperand)
    M.Operands.pop_back();
  for (OpId I : Members.drop_front()) {
    const Op &O = Ops[I];
    for (ValueId V : O.dataOperands())
      M.Operands.push_back(V);
    for (ValueId V : O.Results)
      M.Results.push_back(V);
  }
  if (Counts != InvalidId)
    M.Operands.push_back(Counts);
  return M;
}

static void setAttrs(Program &P, Op &O, const Combination &C) {
  for (auto &[K, V] : C.IntAttrs)
    O.setAttr(P.save(K), V);
  for (auto &[K, V] : C.StringAttrs)
    O.setAttr(P.save(K), P.save(V));
}

void applyCombinations(Program &P, ArrayRef<Combination> Cs) {
  std::vector<Op> &Ops = P.ops();
  size_t N = Ops.size();
  // Which ops disappear, and which merged op goes after which op. A single
  // member that stays where it is only gains its attributes.
  std::vector<uint8_t> Removed(N, 0);
  std::vector<std::pair<OpId, Op>> Inserts; // (after this op, merged op)
  for (const Combination &C : Cs) {
    if (C.Members.size() == 1 && C.InsertAfter == InvalidId) {
      setAttrs(P, Ops[C.Members.front()], C);
      continue;
    }
    for (OpId I : C.Members)
      Removed[I] = 1;
    OpId Where = C.InsertAfter == InvalidId ? C.Members.back() : C.InsertAfter;
    Inserts.push_back({Where, mergeMembers(Ops, C.Members)});
    setAttrs(P, Inserts.back().second, C);
  }
  if (Inserts.empty())
    return;
  llvm::stable_sort(Inserts, [](const auto &A, const auto &B) { return A.first < B.first; });
  // Compact in place. Every merged op replaces at least one removed member
  // at or before its position, so the write index never passes the read
  // index: no second table (a large program's op table is hundreds of MB).
  size_t W = 0, K = 0;
  for (size_t I = 0; I != N; ++I) {
    if (!Removed[I]) {
      if (W != I)
        Ops[W] = std::move(Ops[I]);
      ++W;
    }
    for (; K != Inserts.size() && Inserts[K].first == I; ++K) {
      assert(W <= I && "a merged op would overwrite an op not yet read");
      Ops[W++] = std::move(Inserts[K].second);
    }
  }
  Ops.resize(W);
  P.recomputeDefs();
}

} // namespace collc
