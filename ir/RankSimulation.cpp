//===- ir/RankSimulation.cpp - All ranks' communication, together ---------===//

#include "ir/RankSimulation.h"

#include "llvm/ADT/STLExtras.h"

using namespace llvm;

namespace collc {

RankSimulation::RankSimulation(const RankSchedule &S) : S(S) {
  uint32_t Total = 0;
  for (GroupId G = 0; G != S.numGroups(); ++G) {
    FlatBase.push_back(Total);
    Total += uint32_t(S.numSubgroups(G));
  }
  Arrived.assign(Total, {});
  Completed.assign(Total, 0);
}

ArrayRef<int32_t> RankSimulation::members(uint32_t Flat) const {
  GroupId G = groupOfFlat(Flat);
  return S.subgroup(G, Flat - FlatBase[G]);
}

GroupId RankSimulation::groupOfFlat(uint32_t Flat) const {
  auto It = llvm::upper_bound(FlatBase, Flat);
  return GroupId(It - FlatBase.begin() - 1);
}

bool RankSimulation::complete(uint32_t Flat, RankSimulationVisitor &V) {
  std::vector<int32_t> &Here = Arrived[Flat];
  // Members in rank order, so visitors never see arrival order.
  llvm::sort(Here);
  SmallVector<OpId, 16> Ops;
  for (int32_t M : Here)
    Ops.push_back(Ranks[M].At);
  if (!V.collective(groupOfFlat(Flat), Here, Ops, ++Completed[Flat]))
    return false;
  for (int32_t M : Here) {
    Ranks[M].PC++;
    Ranks[M].W = Wait::Running;
    ReadyQueue.push_back(M);
  }
  Here.clear();
  return true;
}

bool RankSimulation::post(int64_t R, const SimOp &O, RankSimulationVisitor &V, uint32_t &Req) {
  bool IsSend = O.K == SimOp::Send;
  int64_t Peer = O.Peer;
  Req = uint32_t(Requests.size());
  if (Peer < 0 || Peer >= S.worldSize()) {
    Requests.push_back({O.Op, R, -1, O.Group, IsSend});
    return true;
  }
  Requests.push_back({O.Op, R, Peer, O.Group, IsSend});
  Channel &C =
      Channels[IsSend ? std::make_tuple(O.Group, R, Peer) : std::make_tuple(O.Group, Peer, R)];
  std::vector<uint32_t> &Mine = IsSend ? C.Sends : C.Recvs;
  std::vector<uint32_t> &Theirs = IsSend ? C.Recvs : C.Sends;
  size_t &TheirHead = IsSend ? C.RecvHead : C.SendHead;
  if (TheirHead == Theirs.size()) {
    Mine.push_back(Req);
    return true;
  }
  uint32_t Other = Theirs[TheirHead++];
  Requests[Req].Done = Requests[Other].Done = true;
  const Request &S = IsSend ? Requests[Req] : Requests[Other];
  const Request &Rv = IsSend ? Requests[Other] : Requests[Req];
  if (!V.pointToPoint(S.Rank, S.Op, Rv.Rank, Rv.Op))
    return false;
  // The peer may have been waiting for just this (this rank's own request
  // is not awaited yet: it was just posted).
  if (!Requests[Other].Awaited)
    return true;
  RankState &PS = Ranks[Peer];
  if (--PS.Outstanding == 0) {
    PS.Awaiting.clear();
    PS.PC++;
    PS.W = Wait::Running;
    ReadyQueue.push_back(Peer);
  } else {
    describeBlock(Peer);
  }
  return true;
}

void RankSimulation::describeBlock(int64_t R) {
  RankState &St = Ranks[R];
  while (St.FirstOpen != St.Awaiting.size() && Requests[St.Awaiting[St.FirstOpen]].Done)
    ++St.FirstOpen;
  if (St.FirstOpen == St.Awaiting.size())
    return;
  // Named by the send or recv itself (not where the rank stands: a wait or
  // a batch's end), with or without a valid peer.
  const Request &Q = Requests[St.Awaiting[St.FirstOpen]];
  St.At = Q.Op;
  St.W = Q.IsSend ? Wait::Send : Wait::Recv;
  St.Peer = Q.Peer;
  St.Group = Q.Group;
}

bool RankSimulation::await(int64_t R, std::vector<uint32_t> Reqs) {
  if (llvm::all_of(Reqs, [&](uint32_t Q) { return Requests[Q].Done; }))
    return false;
  RankState &St = Ranks[R];
  size_t Open = 0;
  for (uint32_t Q : Reqs)
    if (!Requests[Q].Done && !Requests[Q].Awaited) {
      Requests[Q].Awaited = true;
      ++Open;
    }
  St.Awaiting = std::move(Reqs);
  St.Outstanding = Open;
  St.FirstOpen = 0;
  describeBlock(R);
  return true;
}

bool RankSimulation::advance(int64_t R, RankSimulationVisitor &V) {
  RankState &St = Ranks[R];
  size_t Length = S.length(R);
  while (St.PC < Length) {
    SimOp O = S.at(R, St.PC);
    std::vector<uint32_t> Awaited;
    switch (O.K) {
    case SimOp::Collective: {
      St.W = Wait::Collective;
      St.At = O.Op;
      St.Flat = FlatBase[O.Group] + uint32_t(S.subgroupOf(O.Group, R));
      Arrived[St.Flat].push_back(int32_t(R));
      if (int64_t(Arrived[St.Flat].size()) == S.sizeOn(O.Group, R))
        return complete(St.Flat, V);
      return true;
    }
    case SimOp::Local:
      if (!V.local(R, O.Op))
        return false;
      for (uint32_t X : O.Awaits)
        if (auto It = AsyncRequests[R].find(X); It != AsyncRequests[R].end())
          Awaited.push_back(It->second);
      break;
    case SimOp::Send:
    case SimOp::Recv: {
      uint32_t Req;
      if (!post(R, O, V, Req))
        return false;
      if (O.C == SimOp::Batched)
        St.InBatch.push_back(Req);
      else if (O.C == SimOp::Async)
        AsyncRequests[R][O.Token] = Req;
      else
        Awaited.push_back(Req);
      break;
    }
    case SimOp::Skip:
      break;
    }
    if (O.EndsBatch) {
      Awaited.insert(Awaited.end(), St.InBatch.begin(), St.InBatch.end());
      St.InBatch.clear();
    }
    if (!Awaited.empty() && await(R, std::move(Awaited)))
      return true;
    ++St.PC;
  }
  St.W = Wait::Done;
  return true;
}

RankSimulation::Outcome RankSimulation::run(RankSimulationVisitor &V) {
  Ranks.assign(S.worldSize(), RankState());
  Requests.clear();
  Channels.clear();
  AsyncRequests.clear();
  AsyncRequests.resize(S.worldSize());
  ReadyQueue.clear();
  ReadyHead = 0;
  for (int64_t R = 0; R != S.worldSize(); ++R)
    ReadyQueue.push_back(R);
  while (ReadyHead != ReadyQueue.size()) {
    int64_t R = ReadyQueue[ReadyHead++];
    if (!advance(R, V))
      return Outcome::Stopped;
    // Keep the queue from growing without bound on long runs.
    if (ReadyHead > 4096 && ReadyHead * 2 > ReadyQueue.size()) {
      ReadyQueue.erase(ReadyQueue.begin(), ReadyQueue.begin() + ReadyHead);
      ReadyHead = 0;
    }
  }
  for (const RankState &St : Ranks)
    if (St.W != Wait::Done)
      return Outcome::Stalled;
  return Outcome::Finished;
}

void RankSimulation::waitsFor(int64_t R, SmallVectorImpl<int64_t> &Out) const {
  const RankState &St = Ranks[R];
  if (St.W == Wait::Send || St.W == Wait::Recv) {
    // Every request it awaits must complete: it waits for each peer.
    for (uint32_t Q : St.Awaiting)
      if (Requests[Q].Peer >= 0 && !Requests[Q].Done && !llvm::is_contained(Out, Requests[Q].Peer))
        Out.push_back(Requests[Q].Peer);
    llvm::sort(Out);
    return;
  }
  if (St.W != Wait::Collective)
    return;
  const auto &Here = Arrived[St.Flat];
  for (int32_t M : members(St.Flat))
    if (llvm::find(Here, M) == Here.end())
      Out.push_back(M);
}

std::vector<int64_t> RankSimulation::findWaitCycle() const {
  int64_t N = S.worldSize();
  // Iterative depth-first search: a chain of waits can be as long as the
  // world.
  std::vector<uint8_t> Color(N, 0); // 0 new, 1 on the path, 2 done
  struct Frame {
    int64_t Rank;
    SmallVector<int64_t, 4> Next;
    size_t I = 0;
  };
  for (int64_t Start = 0; Start != N; ++Start) {
    if (Ranks[Start].W == Wait::Done || Color[Start] != 0)
      continue;
    std::vector<Frame> Path;
    auto Push = [&](int64_t R) {
      Color[R] = 1;
      Path.push_back(Frame{R, {}, 0});
      waitsFor(R, Path.back().Next);
    };
    Push(Start);
    while (!Path.empty()) {
      Frame &F = Path.back();
      if (F.I == F.Next.size()) {
        Color[F.Rank] = 2;
        Path.pop_back();
        continue;
      }
      int64_t Q = F.Next[F.I++];
      if (Ranks[Q].W == Wait::Done || Color[Q] == 2)
        continue;
      if (Color[Q] == 1) {
        std::vector<int64_t> Cycle;
        auto It = llvm::find_if(Path, [&](const Frame &X) { return X.Rank == Q; });
        for (; It != Path.end(); ++It)
          Cycle.push_back(It->Rank);
        return Cycle;
      }
      Push(Q);
    }
  }
  return {};
}

std::string RankSimulation::cycleText(ArrayRef<int64_t> Cycle) {
  std::string Ring;
  for (int64_t R : Cycle)
    Ring += std::to_string(R) + " -> ";
  return Ring + std::to_string(Cycle.front());
}

int64_t RankSimulation::findCrossGroupPair() const {
  for (int64_t R = 0; R != int64_t(Ranks.size()); ++R) {
    const RankState &St = Ranks[R];
    if ((St.W != Wait::Send && St.W != Wait::Recv) || St.Peer < 0)
      continue;
    const RankState &Q = Ranks[St.Peer];
    bool Opposite = St.W == Wait::Send ? Q.W == Wait::Recv : Q.W == Wait::Send;
    if (Opposite && Q.Peer == R && Q.Group != St.Group)
      return R;
  }
  return -1;
}

} // namespace collc
