//===- ir/Program.cpp - The collc IR --------------------------------------===//

#include "ir/Program.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using namespace llvm;

namespace collc {

const Attribute *Op::getAttr(StringRef Key) const {
  for (const Attribute &A : Attrs)
    if (A.Key == Key)
      return &A;
  return nullptr;
}

void Op::setAttr(StringRef Key, int64_t V) {
  for (Attribute &A : Attrs)
    if (A.Key == Key) {
      A.IsString = false;
      A.Int = V;
      return;
    }
  Attribute A;
  A.Key = Key;
  A.Int = V;
  Attrs.push_back(A);
}

void Op::setAttr(StringRef Key, StringRef V) {
  for (Attribute &A : Attrs)
    if (A.Key == Key) {
      A.IsString = true;
      A.Str = V;
      return;
    }
  Attribute A;
  A.Key = Key;
  A.IsString = true;
  A.Str = V;
  Attrs.push_back(A);
}

int64_t Group::uniformSize() const {
  if (Subgroups.empty())
    return -1;
  int64_t N = Subgroups.front().size();
  for (const auto &S : Subgroups)
    if (int64_t(S.size()) != N)
      return -1;
  return N;
}

bool Group::coversWorld() const {
  return llvm::all_of(SubgroupOf, [](int32_t S) { return S >= 0; });
}

Program::Program(StringRef N, int64_t World) : WorldSize(World) { Name = save(N); }

namespace {

/// Copies the expressions of one program into another's arena. Bottom-up
/// with an explicit stack, so a deep expression (a predicate of 100k terms)
/// cannot overflow the call stack; a subexpression shared by several
/// parents is copied once.
class ExprCopier {
public:
  explicit ExprCopier(Program &To) : To(To) {}

  const RankExpr *copy(const RankExpr *Root) {
    if (!Root)
      return nullptr;
    Stack.push_back(Root);
    while (!Stack.empty()) {
      const RankExpr *E = Stack.back();
      if (Done.count(E)) {
        Stack.pop_back();
        continue;
      }
      // Children first: push the missing ones and come back to E later.
      bool Ready = true;
      for (const RankExpr *Child : {E->lhs(), E->rhs()})
        if (Child && !Done.count(Child)) {
          Stack.push_back(Child);
          Ready = false;
        }
      if (!Ready)
        continue;
      Stack.pop_back();
      const RankExpr *Copy =
          To.makeExpr(E->kind(), E->loc(), E->value(), lookup(E->lhs()), lookup(E->rhs()));
      Done[E] = Copy;
    }
    return Done.lookup(Root);
  }

private:
  const RankExpr *lookup(const RankExpr *E) const { return E ? Done.lookup(E) : nullptr; }

  Program &To;
  // Keyed by pointer for lookup only, never iterated: no order comes from it.
  DenseMap<const RankExpr *, const RankExpr *> Done;
  std::vector<const RankExpr *> Stack;
};

} // namespace

std::unique_ptr<Program> Program::clone() const {
  auto C = std::make_unique<Program>(Name, WorldSize);
  C->SrcMgr = SrcMgr;
  ExprCopier Exprs(*C);

  // Groups keep their resolved membership; re-resolving would only
  // recompute the same vectors.
  C->Groups.reserve(Groups.size());
  for (const Group &G : Groups) {
    Group Copy = G;
    Copy.Name = C->save(G.Name);
    Copy.Color = Exprs.copy(G.Color);
    Copy.Key = Exprs.copy(G.Key);
    C->GroupNames[Copy.Name] = C->Groups.size();
    C->Groups.push_back(std::move(Copy));
  }

  C->Values.reserve(Values.size());
  for (const Value &V : Values) {
    auto Entry = C->ValueNames.try_emplace(V.Name, ValueId(C->Values.size()));
    Value Copy = V;
    Copy.Name = Entry.first->first();
    C->Values.push_back(std::move(Copy));
  }

  C->Ops.reserve(Ops.size());
  for (const Op &O : Ops) {
    Op Copy = O;
    Copy.Callee = C->save(O.Callee);
    Copy.When = Exprs.copy(O.When);
    Copy.Peer = Exprs.copy(O.Peer);
    for (Attribute &A : Copy.Attrs) {
      A.Key = C->save(A.Key);
      A.Str = C->save(A.Str);
    }
    C->Ops.push_back(std::move(Copy));
  }
  return C;
}

GroupId Program::lookupGroup(StringRef N) const {
  auto It = GroupNames.find(N);
  return It == GroupNames.end() ? InvalidId : It->second;
}

ValueId Program::lookupValue(StringRef N) const {
  auto It = ValueNames.find(N);
  return It == ValueNames.end() ? InvalidId : It->second;
}

static Error groupError(const Group &G, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), "group @%s: %s", G.Name.str().c_str(),
                           Msg.str().c_str());
}

Expected<GroupId> Program::addGroup(Group G) {
  if (GroupNames.count(G.Name))
    return groupError(G, "is already defined");
  G.Name = save(G.Name);
  G.SubgroupOf.assign(WorldSize, -1);
  G.LocalRank.assign(WorldSize, -1);
  G.Subgroups.clear();
  switch (G.K) {
  case Group::World: {
    G.Subgroups.emplace_back();
    G.Subgroups[0].reserve(WorldSize);
    for (int64_t R = 0; R != WorldSize; ++R) {
      G.SubgroupOf[R] = 0;
      G.LocalRank[R] = R;
      G.Subgroups[0].push_back(R);
    }
    break;
  }
  case Group::Ranks: {
    if (G.ExplicitRanks.empty())
      return groupError(G, "a rank list needs at least one rank");
    G.Subgroups.emplace_back();
    for (int64_t R : G.ExplicitRanks) {
      if (R < 0 || R >= WorldSize)
        return groupError(G, formatv("rank {0} is not in 0..{1}", R, WorldSize - 1));
      if (G.SubgroupOf[R] >= 0)
        return groupError(G, formatv("rank {0} is listed twice", R));
      G.SubgroupOf[R] = 0;
      G.LocalRank[R] = G.Subgroups[0].size();
      G.Subgroups[0].push_back(R);
    }
    break;
  }
  case Group::Split: {
    // Colors are grouped in increasing color order so subgroup numbering
    // depends only on the expressions, never on evaluation order.
    std::map<int64_t, std::vector<std::pair<int64_t, int32_t>>> ByColor;
    for (int64_t R = 0; R != WorldSize; ++R) {
      Expected<int64_t> C = G.Color->evaluate(R, WorldSize);
      if (!C)
        return groupError(G, "color on rank " + Twine(R) + ": " + toString(C.takeError()));
      Expected<int64_t> K = G.Key->evaluate(R, WorldSize);
      if (!K)
        return groupError(G, "key on rank " + Twine(R) + ": " + toString(K.takeError()));
      if (*C >= 0)
        ByColor[*C].push_back({*K, int32_t(R)});
    }
    for (auto &Entry : ByColor) {
      auto &Members = Entry.second;
      llvm::stable_sort(Members); // by key, then world rank
      int32_t Index = G.Subgroups.size();
      G.Subgroups.emplace_back();
      for (auto &[Key, R] : Members) {
        (void)Key;
        G.SubgroupOf[R] = Index;
        G.LocalRank[R] = G.Subgroups.back().size();
        G.Subgroups.back().push_back(R);
      }
    }
    break;
  }
  }
  GroupId Id = Groups.size();
  GroupNames[G.Name] = Id;
  Groups.push_back(std::move(G));
  return Id;
}

Expected<ValueId> Program::addValue(StringRef N, TensorType Type) {
  auto [It, Inserted] = ValueNames.try_emplace(N, ValueId(Values.size()));
  if (!Inserted)
    return createStringError(inconvertibleErrorCode(), "value %%%s is already defined",
                             N.str().c_str());
  Value V;
  V.Name = It->first();
  V.Type = std::move(Type);
  Values.push_back(std::move(V));
  return It->second;
}

OpId Program::addOp(Op O) {
  OpId Id = Ops.size();
  for (ValueId R : O.Results)
    Values[R].Def = Id;
  Ops.push_back(std::move(O));
  return Id;
}

void Program::recomputeDefs() {
  for (Value &V : Values)
    V.Def = InvalidId;
  for (OpId I = 0; I != Ops.size(); ++I)
    for (ValueId R : Ops[I].Results)
      Values[R].Def = I;
}

const RankExpr *Program::makeExpr(RankExpr::Kind K, SMLoc Loc, int64_t V, const RankExpr *L,
                                  const RankExpr *R) {
  return new (Arena.Allocate<RankExpr>()) RankExpr(K, Loc, V, L, R);
}

void Program::reserve(size_t NumOps) {
  Ops.reserve(NumOps);
  Values.reserve(NumOps);
}

Expected<bool> runsOn(const Program &P, const Op &O, int64_t Rank) {
  if (O.Group != InvalidId && !P.group(O.Group).isMember(Rank))
    return false;
  if (!O.When)
    return true;
  Expected<int64_t> V = O.When->evaluate(Rank, P.worldSize());
  if (!V)
    return V.takeError();
  return *V != 0;
}

} // namespace collc
