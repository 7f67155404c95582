//===- passes/Combine.h - Merging collectives into one -----------*- C++ -*-===//
//
// Shared by fuse and bucket: what may merge (an explicit key, as XLA's
// combiners use), which ops stop a merge (a use of a member's result, or an
// op that fixes the order of communication), the one loop that groups ops
// by key (each pass supplies its size policy and the words of its reasons),
// and the rewrite that replaces the members by one op.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_COMBINE_H
#define COLLC_PASSES_COMBINE_H

#include "ir/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace collc {

/// What two collectives must share to merge. Element type is separate so
/// bucket can keep one accumulator per type, as DDP does.
struct CombineKey {
  OpKind Kind;
  ReduceOp Reduce;
  double Scale;
  GroupId Group;
  bool Async;
  const RankExpr *Root;
  const RankExpr *When;
  /// all_to_all_v: the split sizes (static matrix or counts value).
  const Op *SplitsOf;

  static CombineKey of(const Op &O);
  bool operator==(const CombineKey &K) const;
};

/// Ops that may be merged by fuse: every collective that moves tensors.
bool isCombinable(const Op &O);

/// Ops across which communication must not move: point-to-point ops, barriers
/// and waits. Merging never moves a member past one of them.
bool isOrderBarrier(OpKind K);

/// A one-line description used in decisions: "compute @bwd.h0 (gpt2.coll:12:3)"
std::string describeOp(const Program &P, const Op &O);

struct Combination {
  std::vector<OpId> Members; ///< in program order
  /// The merged op is placed right after this op (its last member by
  /// default; bucket may delay it to keep buckets in order).
  OpId InsertAfter = InvalidId;
  /// Attributes to set on the merged op (key, value), ints or strings.
  std::vector<std::pair<std::string, std::string>> StringAttrs;
  std::vector<std::pair<std::string, int64_t>> IntAttrs;
};

/// Replaces each combination's members by one op (operands and results in
/// member order) and keeps everything else in order. A combination with one
/// member keeps its op and only gains the attributes.
void applyCombinations(Program &P, llvm::ArrayRef<Combination> Cs);

/// A group of collectives while it is open in groupByKey.
struct OpenGroup {
  CombineKey Key;
  ElemType Elem;
  std::vector<OpId> Members; ///< in program order
  uint64_t Bytes = 0;        ///< of the members' data operands
  /// The pass's own state for this key and element type, kept across the
  /// groups it closes (bucket: which of its limits applies next).
  size_t KeyState = 0;
};

/// A group as groupByKey closed it, and why.
struct ClosedGroup {
  CombineKey Key;
  std::vector<OpId> Members;
  uint64_t Bytes;
  std::string Why;
};

/// What fuse and bucket each supply to the one grouping loop: which ops
/// join, when a group closes by size, and the words of each close reason.
struct GroupingRules {
  /// Whether \p O joins the open group of its key and element type.
  llvm::function_ref<bool(const Op &O)> Joins;
  /// Why \p G must close before \p O (of \p Bytes) joins it; empty: it may.
  llvm::function_ref<std::string(const OpenGroup &G, const Op &O, uint64_t Bytes)> CloseBefore;
  /// Why \p G must close now that its newest member joined; empty: it stays
  /// open.
  llvm::function_ref<std::string(OpenGroup &G)> CloseAfter;
  /// Why a group closes before \p User reads its member's result \p V.
  llvm::function_ref<std::string(ValueId V, const Op &User)> AtUse;
  /// Why every open group closes at the order barrier \p O.
  llvm::function_ref<std::string(const Op &O)> AtBarrier;
  /// Why the groups still open at the end close.
  llvm::StringRef AtEnd;
};

/// The one group-by-key loop (as XLA's combiners share theirs). Walks \p P
/// in program order. An op that joins goes to the open group of its key and
/// element type (at most one per key and type; keys kept in first-seen
/// order, never pointer or hash order). A group closes before an op that
/// reads one of its results (the merge would delay that result past its
/// use), at an order barrier (all groups), when the rules say so, and at
/// the end. Returns every closed group, singles included, in closing order.
std::vector<ClosedGroup> groupByKey(const Program &P, const GroupingRules &Rules);

} // namespace collc

#endif
