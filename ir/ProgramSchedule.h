//===- ir/ProgramSchedule.h - A program as every rank's schedule -*- C++ -*-===//
//
// What the cross-rank simulation (RankSimulation.h) runs for a program:
// every rank walks the program's ops, position = op; an op the rank does not
// run (RankMasks) is Skip there. Sends and recvs are blocking, `async`
// (awaited by a `wait` on their result) or of a `p2p { }` block (awaited at
// its end, on every rank, whether or not the block's last op runs there).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_PROGRAMSCHEDULE_H
#define COLLC_IR_PROGRAMSCHEDULE_H

#include "ir/Program.h"
#include "ir/RankMasks.h"
#include "ir/RankSimulation.h"

#include <vector>

namespace collc {

/// The world rank send/recv \p O of \p P talks to on \p Rank, or -1 when
/// its peer expression fails or falls outside the world or group.
int64_t peerRankOf(const Program &P, const Op &O, int64_t Rank);

/// A program as a schedule: every rank's positions are the program's ops
/// (position = OpId); an op a rank does not run is Skip there.
class ProgramSchedule : public RankSchedule {
public:
  ProgramSchedule(const Program &P, const RankMasks &Masks);
  int64_t worldSize() const override { return P.worldSize(); }
  size_t numGroups() const override { return P.groups().size(); }
  size_t numSubgroups(GroupId G) const override;
  int32_t subgroupOf(GroupId G, int64_t Rank) const override {
    return P.group(G).subgroupOf(Rank);
  }
  llvm::ArrayRef<int32_t> subgroup(GroupId G, size_t S) const override;
  int64_t sizeOn(GroupId G, int64_t Rank) const override { return P.group(G).sizeOn(Rank); }
  size_t length(int64_t) const override { return P.ops().size(); }
  SimOp at(int64_t Rank, size_t Pos) const override;

private:
  const Program &P;
  const RankMasks &Masks;
  std::vector<bool> Used; ///< per group: some op names it
};

} // namespace collc

#endif // COLLC_IR_PROGRAMSCHEDULE_H
