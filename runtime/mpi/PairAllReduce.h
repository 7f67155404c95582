//===- runtime/mpi/PairAllReduce.h - The all_reduce of two members -*- C++ -*-===//
//
// Between two members an all_reduce needs no collective: each rank sends
// the other what it needs and reduces itself, on MPI_Isend and MPI_Irecv
// polled like any request (so with collc's deadline, and no gate before a
// blocking call). Below Halves' size each sends its whole operand and
// reduces the whole vector: one message each way, where libnbc's
// MPI_Iallreduce on two sends two in a row. From it each reduces its half
// of the vector (rank 0 the first) and the two then swap the reduced
// halves: half the bytes each way twice, as MPI's blocking all_reduce
// does, but with a deadline. Just over the eager limit of the transport
// between the two (EagerLimit.h) the whole operand goes as a few messages
// that each fit it (up to MaxPieces): at 4 KiB between two processes of
// this host that took 1.2 us against 3.3 us for one message (a
// rendezvous), at 8 KiB 3.1 us against 5.7; at 12 KiB one message caught up. The reduction is
// MPI_Reduce_local (MPI's arithmetic) with rank 0's operand first, the order MPI_Allreduce keeps.
//
// Plain data, like MpiRequest: a task that holds one moves by copying.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_PAIRALLREDUCE_H
#define COLLC_RUNTIME_MPI_PAIRALLREDUCE_H

#include "runtime/exec/HostStream.h"
#include "runtime/mpi/MpiGroup.h"
#include "runtime/mpi/MpiUserOps.h"

#include <memory>

namespace collc::rt::mpi {

class PairAllReduce {
public:
  /// From this size (on the wire) the halves are reduced apart.
  static constexpr uint64_t HalvesFromBytes = 256 << 10;
  /// Apart from a plan's sends and recvs (tag 0) on the same communicator.
  static constexpr int Tag = 1;

  /// Where the operands are: this rank's (\p Mine, may be \p Wire), the
  /// result (\p Wire), scratch for the peer's part (\p Peer: Count
  /// elements, or Count / 2 + 1 for halves).
  struct Buffers {
    const char *Mine;
    char *Wire;
    char *Peer;
    uint64_t Count;
    unsigned ElemBytes;
  };
  /// The most messages a whole operand goes in (above: beyond it, one
  /// message's single copy is as fast).
  static constexpr unsigned MaxPieces = 3;
  /// Whether \p Count wire elements of \p ElemBytes go as halves.
  static bool halves(uint64_t Count, unsigned ElemBytes) {
    return Count * ElemBytes >= HalvesFromBytes;
  }
  /// Elements of scratch \p Count wire elements of \p ElemBytes need.
  static uint64_t peerElements(uint64_t Count, unsigned ElemBytes) {
    return halves(Count, ElemBytes) ? Count / 2 + 1 : Count;
  }

  /// The messages a whole operand of \p Bytes goes in, where one message
  /// carries \p EagerPayload bytes eagerly (0: unknown).
  static unsigned pieces(uint64_t Bytes, uint64_t EagerPayload) {
    if (EagerPayload == 0 || Bytes <= EagerPayload)
      return 1;
    uint64_t N = (Bytes + EagerPayload - 1) / EagerPayload;
    return N <= MaxPieces ? unsigned(N) : 1;
  }

  bool started() const { return Phase != 0; }

  /// One poll of group \p G's all_reduce with \p M: the first call
  /// announces it and starts the first exchange; \p Q.More until the result
  /// is in B.Wire. Refused on a broken group before it starts; once
  /// started, it runs to its end. A timeout breaks the group, naming who
  /// did not arrive; \p Keep (the scratch) then lives on (AbandonedMemory.h),
  /// and MPI may still write B.Wire, the caller's.
  llvm::Error run(MpiGroup &G, HostStream::Poll &Q, const Buffers &B, MpiReduction M,
                  const std::shared_ptr<void> &Keep);

private:
  /// This rank's range of the vector (all of it, or its half).
  uint64_t ownFirst(const MpiGroup &G, const Buffers &B) const;
  uint64_t ownCount(const MpiGroup &G, const Buffers &B) const;
  llvm::Error start(MpiGroup &G, const Buffers &B, MpiReduction M);
  llvm::Error reduceOwn(MpiGroup &G, const Buffers &B, MpiReduction M);

  /// Receives first, then sends; a piece each.
  MPI_Request Reqs[2 * MaxPieces] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                                     MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  uint64_t Seq = 0;
  std::chrono::steady_clock::time_point Deadline;
  /// 0: not started; 1: the operands travel; 2: the reduced halves do.
  uint8_t Phase = 0;
  bool Halves = false;
  /// Messages each way in the first exchange (1 with halves).
  uint8_t Pieces = 1;
};

} // namespace collc::rt::mpi

#endif
