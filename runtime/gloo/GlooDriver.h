//===- runtime/gloo/GlooDriver.h - Ranks as processes, over Gloo -*- C++ -*-===//
//
// The gloo backend: one rank per process (on one host or many), collectives
// by Gloo's own algorithms over its TCP transport (gloo::allreduce,
// allgather, broadcast, alltoall(v), barrier; send/recv through unbound
// buffers), except a small all_reduce, which goes by recursive doubling
// over the same pairs (GlooSmallAllReduce.h). Processes meet through a
// Gloo store built from the run's rendezvous address
// (runtime/gloo/GlooStore.h): a group joins by name, under that name's
// prefix in the process's store (GroupStore.h: its rank claimed first),
// and connects a full mesh.
//
// Gloo throws C++ exceptions; every one is caught inside this backend and
// returned as a RuntimeError naming the peer when the message allows (see
// GlooFailure.h). After a failure the communicator is broken: Gloo leaves
// its pairs in an unknown state, so later work is refused with the first
// error rather than run on them.
//
// Gloo's headers stay out of this header (the communicator is opaque), so
// its users compile as the rest of collc does.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GLOODRIVER_H
#define COLLC_RUNTIME_GLOO_GLOODRIVER_H

#include "runtime/exec/HostDriverBase.h"
#include "runtime/gloo/ClaimHolder.h"

#include "llvm/ADT/ArrayRef.h"

#include <memory>
#include <utility>
#include <vector>

namespace gloo {
class Context;
} // namespace gloo

namespace collc::rt::gloo {

/// One process's membership of one Gloo group (GlooDriver.cpp).
class Membership;

/// Types, elements(), the stream calls and the reductions without a factor
/// come from HostDriverBase.
struct GlooDriver : HostDriverBase<GlooDriver> {
  using Communicator = std::shared_ptr<Membership>;
  /// A group is named, and every process names it alike: the name is the id.
  using UniqueId = std::string;

  static llvm::StringRef name() { return "gloo"; }
  /// Gloo takes ranks and counts as int.
  static constexpr size_t MaxRanks = 1 << 16;

  // The driver's operations (runtime/exec/DriverOps.def), as Gloo runs them:
  // - join connects a full mesh with the other Ranks - 1 processes that join
  //   the id; it needs the process's rendezvous (configureRendezvous) first.
  // - reduceScatterScaled: Gloo has no reduce_scatter for every type (its
  //   halving-doubling one is typed and takes a plain function, no factor),
  //   so it is Gloo's allreduce on a copy of the source, of which the rank
  //   keeps its chunk.
  // - allGatherWords runs on the caller's thread, stream or not, and needs
  //   no outstanding stream work on the communicator (the ranks would
  //   otherwise pair it with different operations).
  // - split: ranks of equal non-negative color join a new group named after
  //   the parent, the split's number and the color, ordered by key then rank.
  // - health never blocks: the error that broke the communicator, if any.
  // - setTimeout sets Gloo's context timeout (connect and every operation).
#define COLLC_UNSCALED_OP(Result, Name, Params)
#define COLLC_DRIVER_OP(Result, Name, Params) static Result Name Params;
#include "runtime/exec/DriverOps.def"

  // --- beyond the driver's operations ------------------------------------------
  /// This process's rank in \p C and its size (the communicator is opaque
  /// here; the Communicator asks them of a split's result).
  static size_t rankOf(const Communicator &C);
  static size_t sizeOf(const Communicator &C);
  /// The connected Gloo context under \p C (null for none), for
  /// runtime/gloo/GlooCommContext.h only.
  static std::shared_ptr<::gloo::Context> context(const Communicator &C);
  /// join, for a group whose member i is rank \p ParentRanks[i] of
  /// \p Parent: the members' processes known from the parent's join are
  /// watched from the start, so one that ended since is named at once, not
  /// at the join's deadline (GroupStore.h; GroupJoin.h's joinGroupOf).
  static llvm::Expected<Communicator> joinWatched(const Communicator &Parent,
                                                  llvm::ArrayRef<int32_t> ParentRanks, UniqueId Id,
                                                  size_t Rank);

private:
  /// join, watching \p KnownPeers (rank in the new group, process) from
  /// the start: a split's members, known from its parent (GroupStore.h).
  static llvm::Expected<Communicator>
  joinWatching(UniqueId Id, size_t Ranks, size_t Rank,
               std::vector<std::pair<size_t, ClaimHolder>> KnownPeers);
};

static_assert(ExecutorDriver<GlooDriver>);

} // namespace collc::rt::gloo

#endif
