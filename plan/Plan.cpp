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

uint64_t Comm::inputBytes(ArrayRef<Tensor> Tensors) const {
  uint64_t B = 0;
  for (uint32_t T : Inputs)
    B += Tensors[T].Type.bytes();
  return B;
}

uint64_t Comm::outputBytes(ArrayRef<Tensor> Tensors) const {
  uint64_t B = 0;
  for (uint32_t T : Outputs)
    B += Tensors[T].Type.bytes();
  return B;
}

} // namespace collc::plan
