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

#include "llvm/ADT/ArrayRef.h"

#include <memory>

namespace gloo {
class Context;
} // namespace gloo

namespace collc::rt::gloo {

/// One process's membership of one Gloo group (GlooDriver.cpp).
class Membership;

/// Types, elements() and the stream calls come from HostDriverBase.
struct GlooDriver : HostDriverBase {
  using Communicator = std::shared_ptr<Membership>;
  /// A group is named, and every process names it alike: the name is the id.
  using UniqueId = std::string;

  static llvm::StringRef name() { return "gloo"; }
  /// Gloo takes ranks and counts as int.
  static constexpr size_t MaxRanks = 1 << 16;

  // --- the seed's interface ------------------------------------------------
  static llvm::Expected<UniqueId> groupId(const CommunicationId &Id);
  /// Connects a full mesh with the other \p Ranks - 1 processes that join
  /// \p Id; needs the process's rendezvous (configureRendezvous) first.
  static llvm::Expected<Communicator> join(UniqueId Id, size_t Ranks, size_t Rank);
  static llvm::Error allReduce(const Communicator &C, const Resource &Src, const Resource &Dst,
                               Elems E, ReduceOp Op, CommStream S);
  static llvm::Error allGather(const Communicator &C, const Resource &Src, const Resource &Dst,
                               Elems E, CommStream S);
  static llvm::Error reduceScatter(const Communicator &C, const Resource &Src, const Resource &Dst,
                                   Elems E, ReduceOp Op, CommStream S);
  static llvm::Error broadcast(const Communicator &C, const Resource *Src, const Resource &Dst,
                               Elems E, size_t Root, CommStream S);
  static llvm::Error allToAll(const Communicator &C, const Resource &Src, const Resource &Dst,
                              Elems E, size_t Ranks, CommStream S);
  static llvm::Error send(const Communicator &C, const Resource &Src, Elems E, size_t Peer,
                          CommStream S);
  static llvm::Error recv(const Communicator &C, const Resource &Dst, Elems E, size_t Peer,
                          CommStream S);

  // --- beyond the seed -------------------------------------------------------
  static llvm::Error allReduceScaled(const Communicator &C, const Resource &Src,
                                     const Resource &Dst, Elems E, ReduceOp Op, ElemType T,
                                     double Scale, CommStream S);
  /// Gloo has no reduce_scatter for every type (its halving-doubling one is
  /// typed and takes a plain function, no factor): this is Gloo's
  /// allreduce on a copy of the source, of which the rank keeps its chunk.
  static llvm::Error reduceScatterScaled(const Communicator &C, const Resource &Src,
                                         const Resource &Dst, Elems E, ReduceOp Op, ElemType T,
                                         double Scale, CommStream S);
  static llvm::Error allToAllV(const Communicator &C, const Resource &Src, const Resource &Dst,
                               ElemType T, llvm::ArrayRef<uint64_t> SendCounts,
                               llvm::ArrayRef<uint64_t> RecvCounts, CommStream S);
  static llvm::Error barrier(const Communicator &C, CommStream S);
  /// Synchronous, on the caller's thread; needs no outstanding stream work
  /// on \p C (the ranks would otherwise pair it with different operations).
  static llvm::Expected<std::vector<uint32_t>> allGatherWords(const Communicator &C,
                                                              llvm::ArrayRef<uint32_t> Local);
  static llvm::Expected<std::vector<uint32_t>>
  allGatherWords(const Communicator &C, llvm::ArrayRef<uint32_t> Local, CommStream) {
    return allGatherWords(C, Local);
  }
  /// Ranks of equal non-negative \p Color join a new group named after the
  /// parent, the split's number and the color, ordered by \p Key then rank.
  static llvm::Expected<Communicator> split(const Communicator &C, int Color, int Key);
  /// This process's rank in \p C and its size (the communicator is opaque
  /// here; the seed communicator asks them of a split's result).
  static size_t rankOf(const Communicator &C);
  static size_t sizeOf(const Communicator &C);
  /// Never blocks: the error that broke the communicator, if any.
  static llvm::Error health(const Communicator &C);
  /// Gloo's context timeout (connect and every operation).
  static void setTimeout(const Communicator &C, std::chrono::milliseconds T);
  /// The connected Gloo context under \p C (null for none), for
  /// runtime/gloo/GlooCommContext.h only.
  static std::shared_ptr<::gloo::Context> context(const Communicator &C);
};

static_assert(ExecutorDriver<GlooDriver>);

} // namespace collc::rt::gloo

#endif
