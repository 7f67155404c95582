//===- ir/RankSimulation.h - All ranks' communication, together -*- C++ -*-===//
//
// Runs every rank through what it issues (a program's specialization to
// the rank, or a backend's issue order) at once, with blocking (rendezvous)
// semantics for communication: a collective completes when every member of
// its subgroup has reached its next collective in that subgroup; a send
// completes together with the peer's recv from this rank. Each rank
// otherwise walks its positions in order.
//
// Point-to-point is posted, then awaited: a send or recv posts a request;
// requests between two ranks in one group match in the order each side
// posts them (sends from s to r in g with recvs at r from s in g, first
// with first): every backend sends on the group's own communicator (an MPI
// communicator, a Gloo context, an NCCL comm), and those match only their
// own traffic, so a send in @g never meets a recv in the world, even
// between the same two ranks. A blocking op awaits its own request at once;
// an `async` one at its `wait`; the ops of a `p2p { }` block all at the
// block's end. So a
// recv posted before a send (the pairwise exchange) or a ring in one block
// completes, and blocking sends in a ring wait for each other in a cycle.
//
// What the ranks issue comes from a RankSchedule: per rank a sequence of
// positions, each a local op, a collective, a send or a recv (blocking,
// async or in a batch), or nothing. A program's ops are one schedule
// (ProgramSchedule: position = op, predicates from RankMasks); a backend's
// issue order is another (runtime/nccl/StreamOrderCheck.h runs what each
// rank's NCCL comm stream issues, in order, through this same simulation).
//
// Clients observe the run through a visitor: the cross-rank checker compares
// what the members of a rendezvous issued. (The step simulator walks the
// same rules over its own model, passes/analysis/StepSimulator.h, so that a
// plan can be timed as well as a program.)
// When ranks stay blocked the run stops and reports who waits where, so the
// client can look for a cycle.
//
// Cost: every position is visited once per rank; a program's predicates
// come pre-evaluated from RankMasks.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_RANKSIMULATION_H
#define COLLC_IR_RANKSIMULATION_H

#include "ir/Ids.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace collc {

/// What a rank issues at one position of its schedule.
struct SimOp {
  enum Kind : uint8_t { Skip, Local, Collective, Send, Recv };
  /// When a send or recv completes: where it stands, at a later Local that
  /// awaits its Token, or at the end of its batch.
  enum Completion : uint8_t { Blocking, Async, Batched };
  Kind K = Skip;
  Completion C = Blocking;
  /// The last position of a batch, whether or not the rank issues anything
  /// there: the rank awaits every request its batch posted.
  bool EndsBatch = false;
  OpId Op = InvalidId;         ///< what visitors and the rank state name
  /// Collective: its group. Send/Recv: the group whose communicator
  /// carries it, InvalidId (or any id the schedule keeps for it) for the
  /// world; only sends and recvs in one group match.
  GroupId Group = InvalidId;
  int64_t Peer = -1;           ///< Send/Recv: a world rank, -1 when invalid
  uint32_t Token = InvalidId;  ///< Async: the key a later Local awaits it by
  llvm::ArrayRef<uint32_t> Awaits; ///< Local: tokens of async sends/recvs it waits for
};

/// Who issues what: the world, the membership of the groups collectives
/// name, and per rank its positions in issue order.
class RankSchedule {
public:
  virtual ~RankSchedule() = default;
  virtual int64_t worldSize() const = 0;
  virtual size_t numGroups() const = 0;
  /// 0 for a group no position names (its tables need not be built).
  virtual size_t numSubgroups(GroupId G) const = 0;
  /// The subgroup of \p G that \p Rank is in (it issues a collective there).
  virtual int32_t subgroupOf(GroupId G, int64_t Rank) const = 0;
  /// The world ranks of subgroup \p S of \p G.
  virtual llvm::ArrayRef<int32_t> subgroup(GroupId G, size_t S) const = 0;
  /// The size of \p Rank's subgroup of \p G (without building tables where
  /// the group can tell).
  virtual int64_t sizeOn(GroupId G, int64_t Rank) const {
    return int64_t(subgroup(G, size_t(subgroupOf(G, Rank))).size());
  }
  virtual size_t length(int64_t Rank) const = 0;
  virtual SimOp at(int64_t Rank, size_t Pos) const = 0;
};

class RankSimulationVisitor {
public:
  virtual ~RankSimulationVisitor() = default;
  /// \p Rank reached op \p I, which runs there and is not communication
  /// (compute, wait: a Local position). Return false to stop the run.
  virtual bool local(int64_t Rank, OpId I) { return true; }
  /// Every member of a subgroup reached a collective in it. \p Members are
  /// the world ranks in increasing order, \p Ops the op each one reached
  /// (usually all the same op). \p Seq counts the subgroup's collectives
  /// from 1.
  virtual bool collective(GroupId G, llvm::ArrayRef<int32_t> Members, llvm::ArrayRef<OpId> Ops,
                          uint64_t Seq) = 0;
  /// A send on \p Sender met the recv on \p Receiver.
  virtual bool pointToPoint(int64_t Sender, OpId Send, int64_t Receiver, OpId Recv) = 0;
};

class RankSimulation {
public:
  enum class Wait : uint8_t { Running, Collective, Send, Recv, Done };
  struct RankState {
    size_t PC = 0;        ///< the position (a program's: the op)
    Wait W = Wait::Running;
    int64_t Peer = -1;    ///< world rank, while in Send/Recv (-1: none valid)
    GroupId Group = InvalidId; ///< while in Send/Recv: the awaited op's SimOp::Group
    uint32_t Flat = 0;    ///< flat subgroup index, while in Collective
    /// While in Send/Recv: the send/recv awaited (PC may be a wait or a
    /// batch's end); while in Collective: the collective.
    OpId At = InvalidId;
    /// Requests this rank awaits (Send/Recv), and those posted in its open
    /// p2p block.
    std::vector<uint32_t> Awaiting, InBatch;
    /// While in Send/Recv: how many of Awaiting are not done, and the first
    /// of them that may not be (done requests stay done), so that each
    /// match costs O(1) amortized however many requests a rank awaits.
    size_t Outstanding = 0, FirstOpen = 0;
  };
  enum class Outcome { Finished, Stopped, Stalled };

  /// \p S must outlive the simulation.
  explicit RankSimulation(const RankSchedule &S);

  /// Runs until every rank finishes, the visitor stops it, or no rank can
  /// move.
  Outcome run(RankSimulationVisitor &V);

  const RankState &state(int64_t Rank) const { return Ranks[Rank]; }
  /// The ranks \p Rank waits for while stalled, in increasing order.
  void waitsFor(int64_t Rank, llvm::SmallVectorImpl<int64_t> &Out) const;
  /// A cycle of waiting ranks (lowest rank first in search order), or empty.
  std::vector<int64_t> findWaitCycle() const;
  /// \p Cycle as "0 -> 1 -> 0".
  static std::string cycleText(llvm::ArrayRef<int64_t> Cycle);
  /// While stalled: the lowest rank whose awaited send (recv) faces its
  /// peer's recv (send) naming it back but in another group, so the two
  /// cannot match (each group has its own communicator), or -1.
  int64_t findCrossGroupPair() const;
  /// The world ranks of a flat subgroup index.
  llvm::ArrayRef<int32_t> members(uint32_t Flat) const;
  GroupId groupOfFlat(uint32_t Flat) const;

private:
  /// A posted send or recv (Peer -1: no valid peer, it never completes).
  struct Request {
    OpId Op;
    int64_t Rank, Peer;
    GroupId Group;
    bool IsSend;
    bool Done = false;
    bool Awaited = false; ///< in its rank's Awaiting while that rank blocks
  };
  /// Posted requests between one sender and one receiver in one group, not
  /// yet matched.
  struct Channel {
    std::vector<uint32_t> Sends, Recvs;
    size_t SendHead = 0, RecvHead = 0;
  };

  bool advance(int64_t R, RankSimulationVisitor &V);
  bool complete(uint32_t Flat, RankSimulationVisitor &V);
  /// Posts send/recv \p O of rank \p R as request \p Req, matching it if
  /// the peer's side is posted (a request without a valid peer never
  /// matches: the verifier reports it, the rank stalls). False when the
  /// visitor stops.
  bool post(int64_t R, const SimOp &O, RankSimulationVisitor &V, uint32_t &Req);
  /// Blocks \p R on \p Reqs unless all are done; true when it blocked.
  bool await(int64_t R, std::vector<uint32_t> Reqs);
  /// Points the rank's Send/Recv state at its first incomplete request.
  void describeBlock(int64_t R);

  std::vector<Request> Requests;
  /// Keyed by (group, sender, receiver).
  std::map<std::tuple<GroupId, int64_t, int64_t>, Channel> Channels;
  /// Per rank, the request an async send/recv's token names.
  std::vector<llvm::DenseMap<uint32_t, uint32_t>> AsyncRequests;

  const RankSchedule &S;
  std::vector<RankState> Ranks;
  std::vector<uint32_t> FlatBase;            // per group
  std::vector<std::vector<int32_t>> Arrived; // per flat subgroup
  std::vector<uint64_t> Completed;           // per flat subgroup
  std::vector<int64_t> ReadyQueue;
  size_t ReadyHead = 0;
};

} // namespace collc

#endif // COLLC_IR_RANKSIMULATION_H
