//===- passes/Combine.h - Merging collectives into one -----------*- C++ -*-===//
//
// Shared by fuse and bucket: what may merge (an explicit key, as XLA's
// combiners use), which ops stop a merge (a use of a member's result, or an
// op that fixes the order of communication), and the rewrite that replaces
// the members by one op.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_COMBINE_H
#define COLLC_PASSES_COMBINE_H

#include "ir/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Hashing.h"

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
  /// Equal keys hash equal (for lookup only: nothing is ordered by it).
  llvm::hash_code hash() const;
};

/// Ops that may be merged by fuse: every collective that moves tensors,
/// but a joint one (its partners, issued by other ranks, would not follow).
bool isCombinable(const Op &O);

/// Ops across which communication must not move: point-to-point ops, barriers,
/// waits and joint collectives (which pair with other ops by where each rank
/// issues them). Merging never moves a member past one of them.
bool isOrderBarrier(const Op &O);

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

} // namespace collc

#endif
