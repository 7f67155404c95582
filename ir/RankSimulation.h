//===- ir/RankSimulation.h - All ranks' communication, together -*- C++ -*-===//
//
// Runs every rank through its specialization of a program at once, with
// blocking (rendezvous) semantics for communication: a collective completes
// when every member of its subgroup has reached its next op in that
// subgroup; a send completes together with the peer's recv from this rank.
// Each rank otherwise walks its ops in program order.
//
// Point-to-point is posted, then awaited: a send or recv posts a request;
// requests between two ranks match in the order each side posts them
// (sends from s to r with recvs at r from s, first with first, as MPI and
// NCCL match). A blocking op awaits its own request at once; an `async` one
// at its `wait`; the ops of a `p2p { }` block all at the block's end. So a
// recv posted before a send (the pairwise exchange) or a ring in one block
// completes, and blocking sends in a ring wait for each other in a cycle.
//
// Clients observe the run through a visitor: the cross-rank checker compares
// what the members of a rendezvous issued. (The step simulator walks the
// same rules over its own model, passes/analysis/StepSimulator.h, so that a
// plan can be timed as well as a program.)
// When ranks stay blocked the run stops and reports who waits where, so the
// client can look for a cycle.
//
// Cost: every op is visited once per rank; predicates come pre-evaluated
// from RankMasks.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_RANKSIMULATION_H
#define COLLC_IR_RANKSIMULATION_H

#include "ir/Program.h"
#include "ir/RankMasks.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <vector>

namespace collc {

/// The world rank send/recv \p O of \p P talks to on \p Rank, or -1 when
/// its peer expression fails or falls outside the world or group.
int64_t peerRankOf(const Program &P, const Op &O, int64_t Rank);

class RankSimulationVisitor {
public:
  virtual ~RankSimulationVisitor() = default;
  /// \p Rank reached op \p I, which runs there and is not communication
  /// (compute, wait). Return false to stop the run.
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
    OpId PC = 0;
    Wait W = Wait::Running;
    int64_t Peer = -1;    ///< world rank, while in Send/Recv
    uint32_t Flat = 0;    ///< flat subgroup index, while in Collective
    OpId At = InvalidId;  ///< while in Send/Recv: the send/recv awaited (PC may be a wait)
    /// Requests this rank awaits (Send/Recv), and those posted in its open
    /// p2p block.
    std::vector<uint32_t> Awaiting, InBatch;
  };
  enum class Outcome { Finished, Stopped, Stalled };

  RankSimulation(const Program &P, const RankMasks &Masks);

  /// Runs until every rank finishes, the visitor stops it, or no rank can
  /// move.
  Outcome run(RankSimulationVisitor &V);

  const RankState &state(int64_t Rank) const { return Ranks[Rank]; }
  /// The ranks \p Rank waits for while stalled, in increasing order.
  void waitsFor(int64_t Rank, llvm::SmallVectorImpl<int64_t> &Out) const;
  /// A cycle of waiting ranks (lowest rank first in search order), or empty.
  std::vector<int64_t> findWaitCycle() const;
  /// The world rank \p O (send/recv) talks to on \p Rank, or -1.
  int64_t peerOf(const Op &O, int64_t Rank) const;
  /// The world ranks of a flat subgroup index.
  llvm::ArrayRef<int32_t> members(uint32_t Flat) const;
  GroupId groupOfFlat(uint32_t Flat) const;

private:
  /// A posted send or recv.
  struct Request {
    OpId Op;
    int64_t Rank, Peer;
    bool IsSend;
    bool Done = false;
  };
  /// Posted requests between one sender and one receiver, not yet matched.
  struct Channel {
    std::vector<uint32_t> Sends, Recvs;
    size_t SendHead = 0, RecvHead = 0;
  };

  bool advance(int64_t R, RankSimulationVisitor &V);
  bool complete(uint32_t Flat, RankSimulationVisitor &V);
  /// Posts send/recv \p I of rank \p R as request \p Req, matching it if
  /// the peer's side is posted (Req is ~0u when the peer is invalid: the
  /// verifier reports it, the rank stalls). False when the visitor stops.
  bool post(int64_t R, OpId I, RankSimulationVisitor &V, uint32_t &Req);
  /// Blocks \p R on \p Reqs unless all are done; true when it blocked.
  bool await(int64_t R, std::vector<uint32_t> Reqs);
  /// Points the rank's Send/Recv state at its first incomplete request.
  void describeBlock(RankState &St);

  std::vector<Request> Requests;
  std::map<std::pair<int64_t, int64_t>, Channel> Channels;
  /// Per rank, the request an async send/recv result (a value) names.
  std::vector<llvm::DenseMap<ValueId, uint32_t>> AsyncRequests;

  const Program &P;
  const RankMasks &Masks;
  std::vector<RankState> Ranks;
  std::vector<uint32_t> FlatBase;            // per group
  std::vector<std::vector<int32_t>> Arrived; // per flat subgroup
  std::vector<uint64_t> Completed;           // per flat subgroup
  std::vector<int64_t> ReadyQueue;
  size_t ReadyHead = 0;
};

} // namespace collc

#endif // COLLC_IR_RANKSIMULATION_H
