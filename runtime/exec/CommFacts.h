//===- runtime/exec/CommFacts.h - A comm as one rank sees it, for records -*- C++ -*-===//
//
// What a flight record says of each comm event besides its state: the op,
// the group and this rank's subgroup of it, the program line, the element
// type, the bytes, the peer of a send or recv and the root of a broadcast
// (as world ranks), and which of this rank's sends to (or recvs from) that
// peer it is in a step: the key that pairs a send with its recv. All of it
// follows from the plan, so the hot path records none of it: the dump
// writes it (FlightRecordDump.h), and `collc diagnose` computes the same
// facts from a plan it is given to check a dump against.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_COMMFACTS_H
#define COLLC_RUNTIME_EXEC_COMMFACTS_H

#include "plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::rt {

struct CommFacts {
  std::string Op;       ///< "all_reduce", "send", ...
  std::string Group;    ///< the plan group's name, "" for the world
  int64_t Subgroup = 0; ///< this rank's subgroup of Group (0 for the world)
  std::string Loc;      ///< "line:col" in the plan's source, "" when unknown
  std::string DType;    ///< "f32", ...
  uint64_t Bytes = 0;   ///< what this rank sends (a recv: receives)
  int64_t Peer = -1;    ///< send/recv: the other world rank
  int64_t Root = -1;    ///< broadcast: the root's world rank
  /// send/recv: how many of this rank's comms of the same kind with the
  /// same peer come before it in one replay (0 for the first).
  int64_t P2POrdinal = -1;
};

/// The facts of every comm of \p P as rank \p Rank runs them (indexed by
/// comm; a comm the rank does not run gets its op, group and line only).
std::vector<CommFacts> commFactsOfRank(const plan::Plan &P, int64_t Rank);

/// The world ranks of \p Rank's subgroup of group \p Group (the world for -1).
std::vector<int64_t> membersOf(const plan::Plan &P, int32_t Group, int64_t Rank);

/// The world rank of \p Local, a rank of \p Rank's subgroup of group \p Group
/// (the world for -1), or -1 when it is none.
int64_t worldRankOf(const plan::Plan &P, int32_t Group, int64_t Rank, int64_t Local);

} // namespace collc::rt

#endif
