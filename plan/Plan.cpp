//===- plan/Plan.cpp - The plan model ------------------------------===//
//
// The plan's own functions: names of its enums, rank sets, group membership
// and sizes. Reading and writing live beside it (PlanReader, PlanWriter).
//
//===----------------------------------------------------------------------===//

#include "plan/Plan.h"

#include <algorithm>
#include <iterator>

using namespace llvm;

namespace collc::plan {

namespace {
struct CommKindInfo {
  const char *Name;
  bool Collective, Reduce, Root, Splits;
};
} // namespace

// One row per kind in the enum's order (both come from the table).
static constexpr CommKindInfo Infos[] = {
#define COLLC_COLLECTIVE(Enum, Spelling, Reduce, Root, Splits, Results)                           \
  {Spelling, true, Reduce, Root, Splits},
#define COLLC_POINT_TO_POINT(Enum, Spelling, Reduce, Root, Splits, Results)                       \
  {Spelling, false, Reduce, Root, Splits},
#include "ir/Collectives.def"
};
static_assert(std::size(Infos) == NumCommKinds, "one row per kind");

static const CommKindInfo &info(CommKind K) { return Infos[unsigned(K)]; }

StringRef commKindName(CommKind K) { return info(K).Name; }

Optional<CommKind> parseCommKind(StringRef Name) {
  for (unsigned I = 0; I != NumCommKinds; ++I)
    if (Name == Infos[I].Name)
      return CommKind(I);
  return None;
}

bool isCollective(CommKind K) { return info(K).Collective; }
bool hasReduceOp(CommKind K) { return info(K).Reduce; }
bool hasRoot(CommKind K) { return info(K).Root; }
bool takesSplits(CommKind K) { return info(K).Splits; }

StringRef stepKindName(StepKind K) {
  switch (K) {
  case StepKind::Compute:
    return "compute";
  case StepKind::Launch:
    return "launch";
  case StepKind::Wait:
    return "wait";
  }
  llvm_unreachable("bad step kind");
}

bool RankSet::contains(int64_t R) const {
  return All || std::binary_search(Ranks.begin(), Ranks.end(), int32_t(R));
}

bool RankSet::isSubsetOf(const RankSet &O, int64_t World) const {
  if (O.All)
    return true;
  if (All)
    return int64_t(O.Ranks.size()) == World; // O lists increasing ranks of the world
  return std::includes(O.Ranks.begin(), O.Ranks.end(), Ranks.begin(), Ranks.end());
}

bool RankSet::intersects(const RankSet &O) const {
  if (All || O.All)
    return (All || !Ranks.empty()) && (O.All || !O.Ranks.empty());
  auto A = Ranks.begin(), B = O.Ranks.begin();
  while (A != Ranks.end() && B != O.Ranks.end()) {
    if (*A == *B)
      return true;
    if (*A < *B)
      ++A;
    else
      ++B;
  }
  return false;
}

RankSet RankSet::unite(const RankSet &A, const RankSet &B, int64_t World) {
  if (A.All || B.All)
    return RankSet();
  RankSet U;
  U.All = false;
  std::set_union(A.Ranks.begin(), A.Ranks.end(), B.Ranks.begin(), B.Ranks.end(),
                 std::back_inserter(U.Ranks));
  if (int64_t(U.Ranks.size()) == World)
    return RankSet();
  return U;
}

std::string RankSet::str() const {
  if (All)
    return "all";
  if (Ranks.empty())
    return "none";
  std::string S;
  for (size_t I = 0; I < Ranks.size();) {
    size_t J = I;
    while (J + 1 < Ranks.size() && Ranks[J + 1] == Ranks[J] + 1)
      ++J;
    if (!S.empty())
      S += ',';
    S += std::to_string(Ranks[I]);
    if (J > I)
      S += "-" + std::to_string(Ranks[J]);
    I = J + 1;
  }
  return S;
}

ArrayRef<int32_t> Group::membersOf(int64_t Rank) const {
  if (Rank < 0 || Rank >= int64_t(SubgroupOf.size()) || SubgroupOf[Rank] < 0)
    return {};
  return Subgroups[SubgroupOf[Rank]];
}

int64_t Plan::groupSize(const Comm &C, int64_t Rank) const {
  if (C.Group < 0)
    return World;
  return Groups[C.Group].membersOf(Rank).size();
}

void Plan::finalize() {
  for (Group &G : Groups) {
    G.SubgroupOf.assign(World, -1);
    G.LocalRank.assign(World, -1);
    for (size_t S = 0; S != G.Subgroups.size(); ++S)
      for (size_t L = 0; L != G.Subgroups[S].size(); ++L) {
        int32_t R = G.Subgroups[S][L];
        if (R >= 0 && R < World) {
          G.SubgroupOf[R] = S;
          G.LocalRank[R] = L;
        }
      }
  }
}

const CommSide *Comm::sideOn(int64_t R) const {
  for (size_t K = 0; K != numSides(); ++K)
    if (side(K).Ranks.contains(R))
      return &side(K);
  return nullptr;
}

const CommSide &Plan::sideOf(const Step &S) const {
  const Comm &C = Comms[S.Index];
  if (!C.isJoint() || S.Ranks == Step::AllRanks)
    return C;
  const RankSet &Ranks = StepRanks[S.Ranks];
  const CommSide *Side = Ranks.All ? nullptr : C.sideOn(Ranks.Ranks.front());
  return Side ? *Side : C;
}

int requiredVersion(const Plan &P) {
  if (!P.StepRanks.empty())
    return 2;
  for (const Comm &C : P.Comms)
    if (C.isJoint())
      return 2;
  return 1;
}

uint64_t CommSide::inputBytes(ArrayRef<Tensor> Tensors) const {
  uint64_t B = 0;
  for (uint32_t T : Inputs)
    B += Tensors[T].Type.bytes();
  return B;
}

uint64_t CommSide::outputBytes(ArrayRef<Tensor> Tensors) const {
  uint64_t B = 0;
  for (uint32_t T : Outputs)
    B += Tensors[T].Type.bytes();
  return B;
}

} // namespace collc::plan
