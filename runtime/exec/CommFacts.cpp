//===- runtime/exec/CommFacts.cpp - A comm as one rank sees it -------------===//

#include "runtime/exec/CommFacts.h"

#include "runtime/exec/StepWalk.h"

#include <map>
#include <utility>

namespace collc::rt {

std::vector<int64_t> membersOf(const plan::Plan &P, int32_t Group, int64_t Rank) {
  std::vector<int64_t> Out;
  if (Group < 0 || size_t(Group) >= P.Groups.size()) {
    for (int64_t R = 0; R != P.World; ++R)
      Out.push_back(R);
    return Out;
  }
  for (int32_t R : P.Groups[Group].membersOf(Rank))
    Out.push_back(R);
  return Out;
}

int64_t worldRankOf(const plan::Plan &P, int32_t Group, int64_t Rank, int64_t Local) {
  if (Local < 0)
    return -1;
  if (Group < 0 || size_t(Group) >= P.Groups.size())
    return Local < P.World ? Local : -1;
  llvm::ArrayRef<int32_t> Members = P.Groups[Group].membersOf(Rank);
  return size_t(Local) < Members.size() ? Members[Local] : -1;
}

std::vector<CommFacts> commFactsOfRank(const plan::Plan &P, int64_t Rank) {
  std::vector<CommFacts> Out(P.Comms.size());
  for (size_t K = 0; K != P.Comms.size(); ++K) {
    const plan::Comm &C = P.Comms[K];
    CommFacts &F = Out[K];
    F.Op = plan::commKindName(C.Kind).str();
    F.Loc = C.Loc;
    F.DType = elemTypeName(C.Elem).str();
    if (C.Group >= 0 && size_t(C.Group) < P.Groups.size()) {
      const plan::Group &G = P.Groups[C.Group];
      F.Group = G.Name;
      if (Rank >= 0 && size_t(Rank) < G.SubgroupOf.size())
        F.Subgroup = G.SubgroupOf[Rank];
    }
    if (!C.Ranks.contains(Rank))
      continue;
    F.Bytes = C.Kind == plan::CommKind::Recv ? C.outputBytes(P.Tensors) : C.inputBytes(P.Tensors);
    int64_t Given = size_t(Rank) < C.Peers.size() ? C.Peers[Rank] : -1;
    if (C.Kind == plan::CommKind::Send || C.Kind == plan::CommKind::Recv)
      F.Peer = Given; // a world rank already
    else if (plan::hasRoot(C.Kind))
      F.Root = worldRankOf(P, C.Group, Rank, Given);
  }
  // The ordinals, in the order the rank runs its launches.
  std::map<std::pair<int64_t, bool>, int64_t> Seen;
  for (size_t S : stepsOfRank(P, Rank)) {
    const plan::Step &St = P.Steps[S];
    if (St.Kind != plan::StepKind::Launch)
      continue;
    const plan::Comm &C = P.Comms[St.Index];
    if (C.Kind != plan::CommKind::Send && C.Kind != plan::CommKind::Recv)
      continue;
    Out[St.Index].P2POrdinal = Seen[{Out[St.Index].Peer, C.Kind == plan::CommKind::Send}]++;
  }
  return Out;
}

} // namespace collc::rt
