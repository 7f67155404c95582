//===- passes/GroupByKey.cpp - The one loop that groups collectives -------===//

#include "passes/GroupByKey.h"

#include "passes/Combine.h"

#include "llvm/Support/FormatVariadic.h"

#include <unordered_map>

using namespace llvm;

namespace collc {

namespace {

/// One key's state: its open group (if any) and what outlives that group.
struct KeyState {
  CombineKey Key;
  ElemType Elem;
  OpenGroup Group;
};

constexpr uint32_t NoKey = ~0u;

} // namespace

std::vector<ClosedGroup> groupByKey(const Program &P, const GroupRules &Rules,
                                    const CloseWords &Words) {
  const auto &Ops = P.ops();
  std::vector<KeyState> Keys; // in first-seen order
  // Structural hash -> indices into Keys: a lookup that stays fast when
  // every all_to_all_v has its own splits; never iterated.
  std::unordered_map<size_t, SmallVector<uint32_t, 1>> Lookup;
  std::vector<uint32_t> Owner(P.numValues(), NoKey); // value -> key whose open group made it
  std::vector<ClosedGroup> Out;
  // Which key's open group moves each value (a group holds distinct tensors).
  std::vector<uint32_t> Moving(P.numValues(), NoKey);
  // The first op that uses a result of each op (InvalidId: none), for Need.
  std::vector<OpId> FirstNeed;
  {
    std::vector<OpId> FirstUse(P.numValues(), InvalidId);
    for (OpId I = Ops.size(); I-- > 0;)
      for (ValueId V : Ops[I].Operands)
        FirstUse[V] = I;
    FirstNeed.assign(Ops.size(), InvalidId);
    for (OpId I = 0; I != Ops.size(); ++I)
      for (ValueId V : Ops[I].Results)
        FirstNeed[I] = std::min(FirstNeed[I], FirstUse[V]);
  }
  auto NeedName = [&](OpId Need) {
    return Need == InvalidId ? std::string("nothing") : describeOp(P, Ops[Need]);
  };

  auto Close = [&](KeyState &K, std::string Why) {
    OpenGroup &G = K.Group;
    if (G.Members.empty())
      return;
    for (OpId I : G.Members) {
      for (ValueId V : Ops[I].Results)
        Owner[V] = NoKey;
      for (ValueId V : Ops[I].dataOperands())
        if (Moving[V] == uint32_t(&K - Keys.data()))
          Moving[V] = NoKey;
    }
    Out.push_back({std::move(G.Members), G.Bytes, std::move(Why)});
    G.Members.clear();
    G.Bytes = 0;
  };
  auto CloseFull = [&](KeyState &K, std::string Why) {
    if (Why.empty())
      return;
    Close(K, std::move(Why));
    ++K.Group.FullBefore;
  };
  auto Find = [&](const Op &O, ElemType Elem) -> uint32_t {
    CombineKey Key = CombineKey::of(O);
    SmallVector<uint32_t, 1> &Same = Lookup[hash_combine(Key.hash(), Elem)];
    for (uint32_t K : Same)
      if (Keys[K].Key == Key && Keys[K].Elem == Elem)
        return K;
    Same.push_back(Keys.size());
    Keys.push_back({Key, Elem, {}});
    return Keys.size() - 1;
  };

  for (OpId I = 0; I != Ops.size(); ++I) {
    const Op &O = Ops[I];
    for (ValueId V : O.Operands)
      if (Owner[V] != NoKey)
        Close(Keys[Owner[V]], formatv(Words.Use, P.value(V).Name, describeOp(P, O)));
    if (isOrderBarrier(O)) {
      for (KeyState &K : Keys)
        Close(K, formatv(Words.Barrier, describeOp(P, O)));
      continue;
    }
    if (!isCombinable(O))
      continue;
    uint64_t Bytes = 0;
    for (ValueId V : O.dataOperands())
      Bytes += P.value(V).Type.bytes();
    if (!Rules.joins(O, Bytes))
      continue;
    uint32_t Index = Find(O, P.value(O.dataOperands().front()).Type.Elem);
    KeyState &K = Keys[Index];
    if (Rules.byFirstNeed(O) && !K.Group.Members.empty() &&
        FirstNeed[K.Group.Members.front()] != FirstNeed[I])
      Close(K, formatv(Words.Need, NeedName(FirstNeed[K.Group.Members.front()]),
                       NeedName(FirstNeed[I])));
    for (ValueId V : O.dataOperands())
      if (Words.Repeat && Moving[V] == Index) {
        Close(K, formatv(Words.Repeat, P.value(V).Name));
        break;
      }
    if (!K.Group.Members.empty())
      CloseFull(K, Rules.fullBefore(K.Group, O, Bytes));
    K.Group.Members.push_back(I);
    for (ValueId V : O.dataOperands())
      Moving[V] = Index;
    K.Group.Bytes += Bytes;
    for (ValueId V : O.Results)
      Owner[V] = Index;
    CloseFull(K, Rules.fullAfter(K.Group));
  }
  for (KeyState &K : Keys)
    Close(K, Words.End);

  // Close order depends on what stopped each group; first-member order does not.
  llvm::sort(Out, [](const ClosedGroup &A, const ClosedGroup &B) {
    return A.Members.front() < B.Members.front();
  });
  return Out;
}

} // namespace collc
