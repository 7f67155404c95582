//===- ir/RankSimulation.h - All ranks' communication, together -*- C++ -*-===//
//
// Runs every rank through its specialization of a program at once, with
// blocking (rendezvous) semantics for communication: a collective completes
// when every member of its subgroup has reached its next op in that
// subgroup; a send completes together with the peer's recv from this rank.
// Each rank otherwise walks its ops in program order.
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
#include "llvm/ADT/SmallVector.h"

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
    int64_t Peer = -1; ///< world rank, while in Send/Recv
    uint32_t Flat = 0; ///< flat subgroup index, while in Collective
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
  bool advance(int64_t R, RankSimulationVisitor &V);
  bool complete(uint32_t Flat, RankSimulationVisitor &V);

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
