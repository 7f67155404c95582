//===- runtime/interfaces/EagerComm.h - Eager collectives as asynchronous work -*- C++ -*-===//
//
// What a framework's process group asks of a communication library, op by
// op, as c10d's Backend does (torch.distributed's all_reduce, all_gather,
// reduce_scatter, broadcast, all_to_all, send, recv, barrier): each call
// checks its arguments, enqueues the operation and returns a ticket at
// once; the caller waits for the ticket (or asks whether it is done) and
// keeps the memory alive until then. Where Communicator blocks
// per call, this lets a process group overlap its work with compute, and
// lets a send and a recv to one peer progress together.
//
// Collectives run in the order they are issued, on one stream; a send or a
// recv runs on a stream of its peer and direction, so sends to one peer
// stay in order (as that peer's recvs match them) while a recv posted
// after a send still progresses. Memory is host memory; counts are
// elements of the given type. A failure while running (a peer that does
// not arrive within the timeout, a peer gone) is the wait's error and names
// the peer.
//
//   auto C = createGlooEagerComm("c10d.0", World, Rank, Timeout);  // runtime/gloo
//   Expected<EagerTicket> T = (*C)->allReduce(ReduceOp::Sum, ElemType::F32, G.data(), G.size());
//   ... compute ...
//   if (Error E = (*C)->wait(*T))
//     ...
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_EAGERCOMM_H
#define COLLC_RUNTIME_INTERFACES_EAGERCOMM_H

#include "ir/Types.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <optional>

namespace collc::rt {

/// One enqueued operation: its stream and its place there.
struct EagerTicket {
  uint32_t Stream = 0;
  uint64_t Value = 0;
};

class EagerComm {
public:
  virtual ~EagerComm();

  virtual size_t rank() const = 0;
  virtual size_t size() const = 0;
  /// The backend it runs on ("gloo", "mpi", "local"), for messages.
  virtual llvm::StringRef backend() const = 0;

  /// Every rank's \p Count elements of \p T at \p Data reduced with \p Op,
  /// in place; every rank gets the same bits.
  virtual llvm::Expected<EagerTicket> allReduce(ReduceOp Op, ElemType T, void *Data,
                                                uint64_t Count) = 0;
  /// Rank \p Root's \p Bytes at \p Data into every rank's.
  virtual llvm::Expected<EagerTicket> broadcast(void *Data, uint64_t Bytes, size_t Root) = 0;
  /// Every rank's \p Bytes at \p In, concatenated in rank order at \p Out
  /// (size() x \p Bytes).
  virtual llvm::Expected<EagerTicket> allGather(const void *In, void *Out, uint64_t Bytes) = 0;
  /// Rank r's \p Count elements at \p Out: the reduction with \p Op of every
  /// rank's r-th chunk of \p Count elements at \p In.
  virtual llvm::Expected<EagerTicket> reduceScatter(ReduceOp Op, ElemType T, const void *In,
                                                    void *Out, uint64_t Count) = 0;
  /// \p SendCounts[r] elements of \p T to rank r, packed in rank order at
  /// \p In; \p RecvCounts[r] from rank r, packed at \p Out.
  virtual llvm::Expected<EagerTicket> allToAllV(ElemType T, const void *In, void *Out,
                                                llvm::ArrayRef<uint64_t> SendCounts,
                                                llvm::ArrayRef<uint64_t> RecvCounts) = 0;
  virtual llvm::Expected<EagerTicket> send(const void *Data, uint64_t Bytes, size_t Peer) = 0;
  /// Exactly \p Bytes from \p Peer; a send of another size is an error on
  /// both sides.
  virtual llvm::Expected<EagerTicket> recv(void *Data, uint64_t Bytes, size_t Peer) = 0;
  virtual llvm::Expected<EagerTicket> barrier() = 0;

  /// Waits for \p T (and what its stream ran before it): bounded by the
  /// communicator's timeout, past which it is broken; with \p Within, at
  /// most that long (0: only look), past which a Timeout error says what is
  /// pending and the operation goes on (wait again).
  virtual llvm::Error wait(EagerTicket T,
                           std::optional<std::chrono::milliseconds> Within = std::nullopt) = 0;
  /// Whether \p T has run (never blocks; its error is wait's).
  virtual bool done(EagerTicket T) const = 0;
  /// Whether every peer is still reachable, without blocking; names a lost one.
  virtual llvm::Error health() const = 0;
};

} // namespace collc::rt

#endif
