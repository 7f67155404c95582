//===- passes/GroupByKey.h - The one loop that groups collectives -*- C++ -*-===//
//
// Fuse and bucket share one grouping loop, as XLA's combiners share
// CombineInstructionsByKey. It walks the ops in program order and keeps at
// most one open group per key (CombineKey and element type: DDP keeps one
// bucket per type). A group closes
//  - when the pass's size rule says so, before or after a member joins;
//  - before an op that uses a member's result (merging would delay the
//    result past its use);
//  - before a send, recv, barrier or wait (communication never moves across);
//  - when the pass asks (CloseWords::Repeat), before an op that moves a
//    tensor the group already moves: a bucket holds distinct tensors (a
//    second gather of a shard, as FSDP's backward re-gather, is its own
//    collective, needed later);
//  - where the pass asks (GroupRules::byFirstNeed), before an op whose
//    results are first needed by another op than the group's (FSDP's
//    parameter gathers: one unit per bucket);
//  - at the end of the program.
// The pass words every reason; the loop records it with the group. Keys are
// kept in first-seen order and groups come out in the order of their first
// member, never in pointer or hash order, so every rank sees the same groups.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_GROUPBYKEY_H
#define COLLC_PASSES_GROUPBYKEY_H

#include "ir/Program.h"

#include <string>
#include <vector>

namespace collc {

struct OpenGroup {
  std::vector<OpId> Members; ///< in program order
  uint64_t Bytes = 0;        ///< of the members' data operands
  /// Earlier groups of this key that the size rule closed (DDP moves to its
  /// next limit after each).
  unsigned FullBefore = 0;
};

struct ClosedGroup {
  std::vector<OpId> Members; ///< in program order
  uint64_t Bytes;
  std::string Why;
};

/// What a pass decides; the loop does the rest.
class GroupRules {
public:
  virtual ~GroupRules() = default;
  /// Whether \p O, a combinable op moving \p Bytes, joins a group.
  virtual bool joins(const Op &O, uint64_t Bytes) const = 0;
  /// Why the non-empty \p G is full before \p O joins it, or "" if it may.
  virtual std::string fullBefore(const OpenGroup &G, const Op &O, uint64_t Bytes) const {
    return {};
  }
  /// Why \p G is full now that a member joined, or "" if it stays open.
  virtual std::string fullAfter(const OpenGroup &G) const { return {}; }
  /// Whether groups of \p O's key hold only ops whose results the same op
  /// needs first (worded by CloseWords::Need).
  virtual bool byFirstNeed(const Op &O) const { return false; }
};

/// The pass's words for the closes the loop decides (formatv formats).
struct CloseWords {
  const char *Use;     ///< {0}: the value's name, {1}: the op using it
  const char *Barrier; ///< {0}: the barrier op
  const char *End;
  /// {0}: the tensor the group already moves; null lets a group move a
  /// tensor twice (fuse: one all_reduce of %b for two results).
  const char *Repeat = nullptr;
  /// {0}: the op that first needs the group's results, {1}: the new
  /// member's (GroupRules::byFirstNeed).
  const char *Need = "first needed by {0}, then by {1}";
};

/// Every group, closed, in the order of its first member. Groups of one
/// member are included.
std::vector<ClosedGroup> groupByKey(const Program &P, const GroupRules &Rules,
                                    const CloseWords &Words);

} // namespace collc

#endif
