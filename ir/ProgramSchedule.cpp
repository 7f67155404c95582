//===- ir/ProgramSchedule.cpp - A program as every rank's schedule ---------===//

#include "ir/ProgramSchedule.h"

using namespace llvm;

namespace collc {

int64_t peerRankOf(const Program &P, const Op &O, int64_t R) {
  Expected<int64_t> V = O.Peer->evaluate(R, P.worldSize());
  if (!V) {
    consumeError(V.takeError());
    return -1;
  }
  if (O.Group == InvalidId)
    return *V >= 0 && *V < P.worldSize() ? *V : -1;
  ArrayRef<int32_t> Members = P.group(O.Group).membersOf(R);
  return *V >= 0 && *V < int64_t(Members.size()) ? Members[*V] : -1;
}

ProgramSchedule::ProgramSchedule(const Program &P, const RankMasks &Masks)
    : P(P), Masks(Masks), Used(groupsUsedByOps(P)) {}

size_t ProgramSchedule::numSubgroups(GroupId G) const {
  // Only the groups ops use have rendezvous points (and tables).
  return Used[G] ? P.group(G).numSubgroups() : 0;
}

ArrayRef<int32_t> ProgramSchedule::subgroup(GroupId G, size_t Sub) const {
  return P.group(G).subgroups()[Sub];
}

SimOp ProgramSchedule::at(int64_t R, size_t Pos) const {
  const auto &Ops = P.ops();
  const Op &O = Ops[Pos];
  SimOp S;
  S.Op = OpId(Pos);
  // The end of a p2p block awaits everything the block posted, on every
  // rank, whether or not its last op runs there.
  S.EndsBatch = O.Batch != InvalidId && (Pos + 1 == Ops.size() || Ops[Pos + 1].Batch != O.Batch);
  if (!Masks.runsOn(OpId(Pos), R))
    return S;
  if (isCollective(O.Kind)) {
    S.K = SimOp::Collective;
    S.Group = O.Group;
  } else if (!isCommunication(O.Kind)) {
    S.K = SimOp::Local;
    // A wait on async sends and recvs awaits their requests (async
    // collectives completed where they launched; their tokens name none).
    if (O.Kind == OpKind::Wait)
      S.Awaits = O.Operands;
  } else {
    S.K = O.Kind == OpKind::Send ? SimOp::Send : SimOp::Recv;
    S.Peer = peerRankOf(P, O, R);
    S.Group = O.Group; // InvalidId: the world's communicator
    S.C = O.Batch != InvalidId ? SimOp::Batched : O.Async ? SimOp::Async : SimOp::Blocking;
    if (S.C == SimOp::Async)
      S.Token = O.Results.front();
  }
  return S;
}

} // namespace collc
