//===- runtime/nccl/StreamOrderCheck.cpp - Can the comm streams' order run? ===//

#include "runtime/nccl/StreamOrderCheck.h"

#include "ir/RankSimulation.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/nccl/IssueOrder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace llvm;

namespace collc::rt::nccl {

namespace {

bool isPointToPoint(plan::CommKind K) {
  return K == plan::CommKind::Send || K == plan::CommKind::Recv;
}

/// Every rank's issue order as the simulation reads it: one position per
/// comm the rank issues, in stream order (computes and waits issue nothing
/// that could wait for a peer). Group ids are the plan's, and the world
/// (a comm of Group -1) after them.
class StreamSchedule : public RankSchedule {
public:
  explicit StreamSchedule(const plan::Plan &P) : P(P) {
    Offsets.reserve(size_t(P.World) + 1);
    Offsets.push_back(0);
    for (int64_t R = 0; R != P.World; ++R) {
      for (const Issue &I : issueOrder(P, R)) {
        if (I.K == Issue::Eager)
          Positions.push_back({I.Index, false});
        if (I.K != Issue::Launch)
          continue;
        for (uint32_t K : I.Comms)
          Positions.push_back({K, false});
        // The stream waits for a group of sends and recvs as a whole.
        if (isPointToPoint(P.Comms[I.Comms.front()].Kind))
          Positions.back().EndsGroup = true;
      }
      Offsets.push_back(Positions.size());
    }
  }

  int64_t worldSize() const override { return P.World; }
  size_t numGroups() const override { return P.Groups.size() + 1; }
  size_t numSubgroups(GroupId G) const override {
    return G == P.Groups.size() ? 1 : P.Groups[G].Subgroups.size();
  }
  int32_t subgroupOf(GroupId G, int64_t R) const override {
    return G == P.Groups.size() ? 0 : P.Groups[G].SubgroupOf[R];
  }
  ArrayRef<int32_t> subgroup(GroupId G, size_t S) const override {
    if (G != P.Groups.size())
      return P.Groups[G].Subgroups[S];
    if (World.empty()) {
      World.resize(size_t(P.World));
      std::iota(World.begin(), World.end(), 0);
    }
    return World;
  }
  int64_t sizeOn(GroupId G, int64_t R) const override {
    return G == P.Groups.size() ? P.World
                                : int64_t(P.Groups[G].Subgroups[P.Groups[G].SubgroupOf[R]].size());
  }
  size_t length(int64_t R) const override { return Offsets[R + 1] - Offsets[R]; }
  SimOp at(int64_t R, size_t Pos) const override {
    const Position &X = Positions[Offsets[R] + Pos];
    const plan::Comm &C = P.Comms[X.Comm];
    SimOp S;
    S.Op = X.Comm;
    // Collectives rendezvous in their group; sends and recvs match on its
    // comm only (the world's after the plan's groups).
    S.Group = C.Group >= 0 ? GroupId(C.Group) : GroupId(P.Groups.size());
    if (isPointToPoint(C.Kind)) {
      S.K = C.Kind == plan::CommKind::Send ? SimOp::Send : SimOp::Recv;
      S.C = SimOp::Batched;
      S.Peer = C.Peers[R];
      S.EndsBatch = X.EndsGroup;
    } else {
      S.K = SimOp::Collective;
    }
    return S;
  }

private:
  struct Position {
    uint32_t Comm;
    bool EndsGroup; ///< the last send/recv of an NCCL group
  };
  const plan::Plan &P;
  std::vector<Position> Positions; ///< every rank's, rank after rank
  std::vector<size_t> Offsets;     ///< per rank, where its positions start
  mutable std::vector<int32_t> World;
};

class StreamOrderChecker : public RankSimulationVisitor {
public:
  explicit StreamOrderChecker(const plan::Plan &P) : P(P), Schedule(P), Sim(Schedule) {}

  Error run() {
    switch (Sim.run(*this)) {
    case RankSimulation::Outcome::Finished:
      return Error::success();
    case RankSimulation::Outcome::Stopped:
      return makeError(ErrorKind::Unsupported, header() + Mismatch);
    case RankSimulation::Outcome::Stalled:
      return makeError(ErrorKind::Unsupported, header() + stall());
    }
    llvm_unreachable("bad outcome");
  }

  bool collective(GroupId G, ArrayRef<int32_t> Members, ArrayRef<OpId> Ops,
                  uint64_t Seq) override {
    for (size_t I = 1; I != Members.size(); ++I) {
      if (Ops[I] == Ops.front())
        continue;
      Mismatch = formatv("ranks {0} and {1} of {2} would pair different comms as collective "
                         "number {3} there: {4} and {5}",
                         Members.front(), Members[I], groupName(G), Seq, comm(Ops.front(), -1),
                         comm(Ops[I], -1))
                     .str();
      return false;
    }
    return true;
  }
  bool pointToPoint(int64_t, OpId, int64_t, OpId) override { return true; }

private:
  std::string header() const {
    return formatv("plan @{0} would hang on NCCL, where a rank's calls run in order on its one "
                   "comm stream, an NCCL group at a time: ",
                   P.Program)
        .str();
  }

  std::string groupName(GroupId G) const {
    return G == P.Groups.size() ? std::string("the world") : "@" + P.Groups[G].Name;
  }

  /// "@tp's communicator", "the world's communicator".
  std::string communicatorOf(uint32_t K) const {
    int32_t G = P.Comms[K].Group;
    return groupName(G >= 0 ? GroupId(G) : GroupId(P.Groups.size())) + "'s communicator";
  }

  /// "comm #3 (recv from rank 1 at model.coll:7:3)"; \p Rank names the peer.
  std::string comm(uint32_t K, int64_t Rank) const {
    const plan::Comm &C = P.Comms[K];
    std::string What = commKindName(C.Kind).str();
    if (isPointToPoint(C.Kind) && Rank >= 0 && C.Peers[Rank] >= 0)
      What += formatv(" {0} rank {1}", C.Kind == plan::CommKind::Send ? "to" : "from",
                      C.Peers[Rank])
                  .str();
    What += " in " + groupName(C.Group >= 0 ? GroupId(C.Group) : GroupId(P.Groups.size()));
    if (!C.Loc.empty())
      What += " at " + (P.Source.empty() ? std::string("<program>") : P.Source) + ":" + C.Loc;
    return formatv("comm #{0} ({1})", K, What).str();
  }

  /// Where rank \p R stands: the comm it waits for, the group it is in and
  /// what its stream issues only after that group.
  std::string waitOf(int64_t R) const {
    const RankSimulation::RankState &St = Sim.state(R);
    if (St.W == RankSimulation::Wait::Collective)
      return formatv("rank {0} waits in {1}", R, comm(St.At, R)).str();
    if (St.W != RankSimulation::Wait::Send && St.W != RankSimulation::Wait::Recv)
      return formatv("rank {0} has issued all of its calls", R).str();
    std::string S = formatv("rank {0} waits for {1}", R, comm(St.At, R)).str();
    std::vector<Issue> Order = issueOrder(P, R);
    auto Group = llvm::find_if(Order, [&](const Issue &I) {
      return I.K == Issue::Launch && llvm::is_contained(I.Comms, St.At);
    });
    if (Group == Order.end())
      return S;
    if (Group->Comms.size() == 1) {
      S += ", issued alone";
    } else {
      S += ", in its NCCL group of comms";
      for (size_t I = 0; I != Group->Comms.size(); ++I)
        S += (I ? ", #" : " #") + std::to_string(Group->Comms[I]);
    }
    if (Group->IssuedBy == Issue::AtCommChange)
      S += formatv(" (its group ends where comm #{0} is launched on {1}: NCCL would run a "
                   "group of two communicators in an order of its own)",
                   Group->Until, communicatorOf(Group->Until))
               .str();
    auto Next = std::find_if(std::next(Group), Order.end(), [](const Issue &I) {
      return I.K == Issue::Launch || I.K == Issue::Eager;
    });
    if (Next != Order.end())
      S += "; its stream issues " +
           comm(Next->K == Issue::Eager ? Next->Index : Next->Comms.front(), R) +
           " only after that";
    return S;
  }

  /// A stalled send and recv that name each other's ranks but different
  /// groups (NCCL comms), or "".
  std::string crossGroupPair() const {
    int64_t R = Sim.findCrossGroupPair();
    if (R < 0)
      return "";
    const RankSimulation::RankState &St = Sim.state(R);
    const RankSimulation::RankState &Q = Sim.state(St.Peer);
    return formatv("rank {0}'s {1} and rank {2}'s {3} name each other but different "
                   "communicators ({4} and {5}), and NCCL matches a send with a recv on one "
                   "communicator only: name the same group on both sides",
                   R, comm(St.At, R), St.Peer, comm(Q.At, St.Peer), groupName(St.Group),
                   groupName(Q.Group))
        .str();
  }

  std::string stall() const {
    std::string Out = crossGroupPair();
    if (!Out.empty())
      return Out;
    std::vector<int64_t> Cycle = Sim.findWaitCycle();
    if (!Cycle.empty()) {
      Out = "ranks wait for each other in a cycle " + RankSimulation::cycleText(Cycle);
      for (int64_t R : Cycle)
        Out += "\n  " + waitOf(R);
    } else {
      // No cycle: someone waits for a rank that issues nothing more.
      for (int64_t R = 0; R != P.World && Out.empty(); ++R) {
        if (Sim.state(R).W == RankSimulation::Wait::Done)
          continue;
        SmallVector<int64_t, 4> Next;
        Sim.waitsFor(R, Next);
        for (int64_t Q : Next)
          if (Sim.state(Q).W == RankSimulation::Wait::Done) {
            Out = formatv("rank {0} waits for rank {1}, which issues no more calls\n  {2}", R, Q,
                          waitOf(R))
                      .str();
            break;
          }
        if (Out.empty() && Next.empty())
          Out = formatv("rank {0} waits for no valid peer\n  {1}", R, waitOf(R)).str();
      }
    }
    return Out + "\nan async send or recv is issued with the sends and recvs launched after it "
                 "only up to its own wait, the next collective or the next launch on another "
                 "communicator (docs/runtime.md, \"Point-to-point on NCCL\"): launch the rest "
                 "of its exchange before that collective or wait, in the same group, or write "
                 "the exchange as one p2p { } block";
  }

  const plan::Plan &P;
  StreamSchedule Schedule;
  RankSimulation Sim;
  std::string Mismatch;
};

} // namespace

Error checkStreamOrder(const plan::Plan &P) {
  // Without sends and recvs nothing is held: every stream issues its
  // rank's collectives in the plan's order (a group holds one
  // communicator's, so NCCL keeps that order too), and waits for nothing
  // the plan's own order (checked when it was compiled) does not.
  if (llvm::none_of(P.Comms, [](const plan::Comm &C) { return isPointToPoint(C.Kind); }))
    return Error::success();
  return StreamOrderChecker(P).run();
}

Expected<NcclRankPlan> lowerRunnableForRank(const plan::Plan &P, int64_t Rank) {
  Expected<NcclRankPlan> L = lowerForRank(P, Rank);
  if (!L)
    return L.takeError();
  if (Error E = checkStreamOrder(P))
    return E;
  return L;
}

} // namespace collc::rt::nccl
