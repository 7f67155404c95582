//===- ir/Program.cpp - The collc IR --------------------------------------===//

#include "ir/Program.h"

#include "ir/RankExprFold.h"
#include "ir/RankRange.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <mutex>

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

struct Group::LazyTables {
  std::once_flag Once;
  GroupTables T;
};

static Error groupError(const Group &G, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), "group @%s: %s", G.Name.str().c_str(),
                           Msg.str().c_str());
}

namespace {

/// Walks a rank list in the order written, failing on a rank out of range
/// or listed twice; memory proportional to the list, not to the world.
Error forEachListedRank(const Group &G, function_ref<void(int32_t Rank)> Each) {
  if (G.ExplicitRanks.empty())
    return groupError(G, "a rank list needs at least one rank");
  // For lookup only, never iterated: no order comes from it.
  DenseSet<int64_t> Seen;
  for (int64_t R : G.ExplicitRanks) {
    if (R < 0 || R >= G.WorldSize)
      return groupError(G, formatv("rank {0} is not in 0..{1}", R, G.WorldSize - 1));
    if (!Seen.insert(R).second)
      return groupError(G, formatv("rank {0} is listed twice", R));
    Each(int32_t(R));
  }
  return Error::success();
}

/// Evaluates a split's color and key on every rank in rank order; fails on
/// the first rank where one cannot be evaluated.
Error forEachSplitRank(const Group &G,
                       function_ref<void(int32_t Rank, int64_t Color, int64_t Key)> Each) {
  for (int64_t R = 0; R != G.WorldSize; ++R) {
    Expected<int64_t> C = G.Color->evaluate(R, G.WorldSize);
    if (!C)
      return groupError(G, "color on rank " + Twine(R) + ": " + toString(C.takeError()));
    Expected<int64_t> K = G.Key->evaluate(R, G.WorldSize);
    if (!K)
      return groupError(G, "key on rank " + Twine(R) + ": " + toString(K.takeError()));
    Each(int32_t(R), *C, *K);
  }
  return Error::success();
}

/// Resolves a group that addGroup has checked, so nothing here can fail.
GroupTables buildTables(const Group &G) {
  GroupTables T;
  T.SubgroupOf.assign(G.WorldSize, -1);
  T.LocalRank.assign(G.WorldSize, -1);
  auto Add = [&](int32_t Sub, int32_t R) {
    T.SubgroupOf[R] = Sub;
    T.LocalRank[R] = T.Subgroups[Sub].size();
    T.Subgroups[Sub].push_back(R);
  };
  switch (G.K) {
  case Group::World:
    T.Subgroups.emplace_back();
    T.Subgroups[0].reserve(G.WorldSize);
    for (int64_t R = 0; R != G.WorldSize; ++R)
      Add(0, int32_t(R));
    break;
  case Group::Ranks:
    T.Subgroups.emplace_back();
    cantFail(forEachListedRank(G, [&](int32_t R) { Add(0, R); }));
    break;
  case Group::Split: {
    // Colors are grouped in increasing color order so subgroup numbering
    // depends only on the expressions, never on evaluation order.
    std::map<int64_t, std::vector<std::pair<int64_t, int32_t>>> ByColor;
    cantFail(forEachSplitRank(G, [&](int32_t R, int64_t C, int64_t K) {
      if (C >= 0)
        ByColor[C].push_back({K, R});
    }));
    for (auto &Entry : ByColor) {
      auto &Members = Entry.second;
      llvm::stable_sort(Members); // by key, then world rank
      int32_t Index = T.Subgroups.size();
      T.Subgroups.emplace_back();
      for (auto &[Key, R] : Members) {
        (void)Key;
        Add(Index, R);
      }
    }
    break;
  }
  }
  return T;
}

} // namespace

const GroupTables &Group::tables() const {
  assert(Lazy && "a group is resolved by Program::addGroup");
  std::call_once(Lazy->Once, [&] { Lazy->T = buildTables(*this); });
  return Lazy->T;
}

bool Group::hasTables() const {
  // Only tests ask, from the one thread that builds.
  return Lazy && !Lazy->T.SubgroupOf.empty();
}

int64_t Group::uniformSize() const {
  if (K == World)
    return WorldSize;
  if (K == Ranks)
    return int64_t(ExplicitRanks.size());
  ArrayRef<std::vector<int32_t>> Subs = subgroups();
  if (Subs.empty())
    return -1;
  int64_t N = Subs.front().size();
  for (const auto &S : Subs)
    if (int64_t(S.size()) != N)
      return -1;
  return N;
}

bool Group::coversWorld() const {
  if (K == World)
    return true;
  // Listed ranks are distinct and in range: all of them is the world.
  if (K == Ranks)
    return int64_t(ExplicitRanks.size()) == WorldSize;
  return llvm::all_of(subgroupOfTable(), [](int32_t S) { return S >= 0; });
}

Program::Program(StringRef N, int64_t World) : WorldSize(World) { Name = save(N); }

namespace {

/// Copies the expressions of one program into another's arena, bottom-up
/// (foldBottomUp: a deep expression cannot overflow the call stack); a
/// subexpression shared by several parents, in one expression or across the
/// program, is copied once.
class ExprCopier {
public:
  explicit ExprCopier(Program &To) : To(To) {}

  const RankExpr *copy(const RankExpr *Root) {
    if (!Root)
      return nullptr;
    return *foldBottomUp(*Root, Done, [&](const RankExpr &E) -> std::optional<const RankExpr *> {
      return To.makeExpr(E.kind(), E.loc(), E.value(), lookup(E.lhs()), lookup(E.rhs()));
    });
  }

private:
  const RankExpr *lookup(const RankExpr *E) const { return E ? Done.lookup(E) : nullptr; }

  Program &To;
  DenseMap<const RankExpr *, const RankExpr *> Done;
};

} // namespace

std::unique_ptr<Program> Program::clone() const {
  auto C = std::make_unique<Program>(Name, WorldSize);
  C->SrcMgr = SrcMgr;
  ExprCopier Exprs(*C);

  // Groups share their tables (built or not) with the copy: they are
  // immutable once built, and re-resolving would only recompute them.
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

Expected<GroupId> Program::addGroup(Group G) {
  if (GroupNames.count(G.Name))
    return groupError(G, "is already defined");
  G.Name = save(G.Name);
  G.WorldSize = WorldSize;
  // Check the definition on every rank now, so every error is reported
  // whether or not an op uses the group; keep nothing world-sized.
  if (G.K == Group::Ranks)
    if (Error E = forEachListedRank(G, [](int32_t) {}))
      return E;
  // A color and key that cannot fail on any rank need no walk over them.
  if (G.K == Group::Split &&
      !(rangeOverRanks(*G.Color, WorldSize) && rangeOverRanks(*G.Key, WorldSize)))
    if (Error E = forEachSplitRank(G, [](int32_t, int64_t, int64_t) {}))
      return E;
  G.Lazy = std::make_shared<Group::LazyTables>();
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

std::vector<bool> groupsUsedByOps(const Program &P) {
  std::vector<bool> Used(P.groups().size(), false);
  for (const Op &O : P.ops())
    if (O.Group < Used.size())
      Used[O.Group] = true;
  return Used;
}

std::optional<GroupBudgetExcess> checkGroupTableBudget(const Program &P, GroupsNeeded Which) {
  ArrayRef<Group> Groups = P.groups();
  std::vector<bool> Needed = Which == GroupsNeeded::All
                                 ? std::vector<bool>(Groups.size(), true)
                                 : groupsUsedByOps(P);
  // At most 2^32 groups of 12 x 2^20 bytes: no overflow in 64 bits.
  uint64_t PerGroup = GroupTables::bytesFor(P.worldSize());
  uint64_t Count = llvm::count(Needed, true), Bytes = Count * PerGroup;
  if (Bytes <= MaxGroupTableBytes)
    return std::nullopt;
  // Point at the group whose tables would cross the limit.
  GroupId Over = 0;
  for (uint64_t Sum = 0; Over != Groups.size(); ++Over)
    if (Needed[Over] && (Sum += PerGroup) > MaxGroupTableBytes)
      break;
  GroupBudgetExcess X;
  X.Loc = Groups[Over].Loc;
  X.Msg = formatv("group @{0} takes the per-rank group tables over their limit: the {1} groups "
                  "{2} need {3} bytes each at world {4}, {5} bytes ({6} MiB) in all, more than "
                  "the limit of {7} bytes ({8} MiB); compile for fewer ranks (collc compile "
                  "--world N) or use fewer groups",
                  Groups[Over].Name, Count,
                  Which == GroupsNeeded::UsedByOps ? "that ops use"
                                                   : "of the program (a plan lists them all)",
                  PerGroup, P.worldSize(), Bytes, Bytes >> 20, MaxGroupTableBytes,
                  MaxGroupTableBytes >> 20);
  return X;
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
