//===- passes/BucketAssign.h - Buckets, assigned and placed -*- C++ -*-===//
//
// The two halves of bucketing every policy shares: DDP's size rule
// (compute_bucket_assignment_by_size: per element type, a bucket closes once
// its bytes reach the current limit, and that type then moves to the next
// limit, the last repeating; open buckets close at the end), and placing
// buckets so they launch in index order as DDP's reducer does. A bucket
// also closes early before an op that uses one of its results and before
// send, recv, barrier and wait (GroupByKey.h's loop).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_BUCKETASSIGN_H
#define COLLC_PASSES_BUCKETASSIGN_H

#include "passes/Combine.h"
#include "passes/GroupByKey.h"

#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace collc {

/// all_reduce, all_gather and reduce_scatter: what buckets hold.
bool isBucketable(const Op &O);

/// FSDP's unit: an all_gather bucket gathers the parameters of one module,
/// the op that first needs them, so each unit can launch on its own
/// (Schedule.cpp bounds how many are in flight). Gradient buckets (DDP)
/// keep PyTorch's assignment.
bool gathersByUnit(const Op &O);

/// bucket's words for the closes GroupByKey's loop decides.
extern const CloseWords BucketWords;

/// \p Buckets (in the order of their first tensor, which numbers them) as
/// combinations with `bucket` and `bucket_why`, placed so they launch in
/// index order: a bucket whose last tensor is ready before an earlier
/// bucket's waits for it, unless one of its results is needed sooner.
std::vector<Combination> placeBuckets(const Program &P, std::vector<ClosedGroup> Buckets);

/// DDP's assignment with \p Limits (the last repeats) and early closing, as
/// combinations (not yet applied).
std::vector<Combination> assignBuckets(const Program &P, llvm::ArrayRef<uint64_t> Limits);

} // namespace collc

#endif
