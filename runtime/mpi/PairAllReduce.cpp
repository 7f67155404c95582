//===- runtime/mpi/PairAllReduce.cpp - The all_reduce of two members ------===//

#include "runtime/mpi/PairAllReduce.h"

#include "runtime/mpi/AbandonedMemory.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstring>

using namespace llvm;

namespace collc::rt::mpi {

uint64_t PairAllReduce::ownFirst(const MpiGroup &G, const Buffers &B) const {
  return Halves && G.rank() == 1 ? B.Count / 2 : 0;
}

uint64_t PairAllReduce::ownCount(const MpiGroup &G, const Buffers &B) const {
  if (!Halves)
    return B.Count;
  return G.rank() == 0 ? B.Count / 2 : B.Count - B.Count / 2;
}

Error PairAllReduce::start(MpiGroup &G, const Buffers &B, MpiReduction M) {
  int Peer = 1 - G.rank();
  uint64_t First = ownFirst(G, B), Own = ownCount(G, B);
  // The peer's range: the rest of the vector (empty without halves).
  uint64_t OtherFirst = First == 0 ? Own : 0, Other = Halves ? B.Count - Own : 0;
  // First the operands: the peer's over this rank's range, this rank's
  // over the peer's (all of it without halves). Then the reduced ranges.
  char *RecvInto = Phase == 1 ? B.Peer : B.Wire + OtherFirst * B.ElemBytes;
  uint64_t RecvCount = Phase == 1 ? Own : Other;
  const char *SendFrom = Phase == 1 ? B.Mine + (Halves ? OtherFirst * B.ElemBytes : 0)
                                    : B.Wire + First * B.ElemBytes;
  uint64_t SendCount = Phase == 1 ? (Halves ? Other : B.Count) : Own;
  // In pieces (the first exchange without halves), the same on both: each
  // piece's send matches its recv, in order. Counts fit: MpiDriver refuses
  // more than INT_MAX elements.
  unsigned N = Phase == 1 ? Pieces : 1;
  uint64_t Step = (RecvCount + N - 1) / N;
  for (unsigned I = 0; I != N; ++I) {
    uint64_t From = std::min(RecvCount, I * Step), Count = std::min(RecvCount - From, Step);
    if (int Rc = MPI_Irecv(RecvInto + From * B.ElemBytes, int(Count), M.Type, Peer, Tag, G.comm(),
                           &Reqs[I]);
        Rc != MPI_SUCCESS)
      return G.breakWith(mpiError(Rc, "all_reduce (MPI_Irecv from the peer)", G.name()));
  }
  Step = (SendCount + N - 1) / N;
  for (unsigned I = 0; I != N; ++I) {
    uint64_t From = std::min(SendCount, I * Step), Count = std::min(SendCount - From, Step);
    if (int Rc = MPI_Isend(SendFrom + From * B.ElemBytes, int(Count), M.Type, Peer, Tag, G.comm(),
                           &Reqs[MaxPieces + I]);
        Rc != MPI_SUCCESS)
      return G.breakWith(mpiError(Rc, "all_reduce (MPI_Isend to the peer)", G.name()));
  }
  return Error::success();
}

Error PairAllReduce::reduceOwn(MpiGroup &G, const Buffers &B, MpiReduction M) {
  uint64_t Offset = ownFirst(G, B) * B.ElemBytes, Own = ownCount(G, B);
  size_t Bytes = Own * B.ElemBytes;
  int Rc = MPI_SUCCESS;
  // MPI_Reduce_local: inout = in op inout, with rank 0's operand as in.
  if (G.rank() == 0) {
    Rc = MPI_Reduce_local(B.Mine + Offset, B.Peer, int(Own), M.Type, M.Op);
    if (Bytes)
      std::memcpy(B.Wire + Offset, B.Peer, Bytes);
  } else {
    if (Bytes && B.Mine != B.Wire)
      std::memcpy(B.Wire + Offset, B.Mine + Offset, Bytes);
    Rc = MPI_Reduce_local(B.Peer, B.Wire + Offset, int(Own), M.Type, M.Op);
  }
  if (Rc != MPI_SUCCESS)
    return G.breakWith(mpiError(Rc, "all_reduce (MPI_Reduce_local)", G.name()));
  return Error::success();
}

Error PairAllReduce::run(MpiGroup &G, HostStream::Poll &Q, const Buffers &B, MpiReduction M,
                         const std::shared_ptr<void> &Keep) {
  auto GiveUp = [&](Error E) {
    keepForAbandonedRequest(Keep);
    return E;
  };
  if (Phase == 0) {
    if (Error E = G.check())
      return E;
    Halves = halves(B.Count, B.ElemBytes);
    Pieces = Halves ? 1 : uint8_t(pieces(B.Count * B.ElemBytes, G.eagerPayload()));
    Seq = G.arrive();
    Deadline = std::chrono::steady_clock::now() + G.timeout();
    Phase = 1;
    if (Error E = start(G, B, M))
      return GiveUp(std::move(E));
  }
  // MPI_Test leaves a completed request MPI_REQUEST_NULL.
  // Once the peer's operand came, only the peer can be late: named as such.
  int64_t Late = Phase == 2 ? 1 - G.rank() : -1;
  for (MPI_Request &Req : Reqs) {
    bool Done = false;
    if (Req != MPI_REQUEST_NULL)
      if (Error E = G.test(Req, "all_reduce", Late, Seq, Deadline, Done))
        return GiveUp(std::move(E));
  }
  // Not done, or a half to reduce, which the issuing thread leaves to
  // another (HostStream::Poll).
  Q.More = llvm::any_of(Reqs, [](MPI_Request R) { return R != MPI_REQUEST_NULL; }) ||
           (Phase == 1 && Halves && !Q.MayBlock);
  if (Q.More || Phase == 2)
    return Error::success();
  if (Error E = reduceOwn(G, B, M))
    return E;
  if (!Halves)
    return Error::success();
  Phase = 2;
  if (Error E = start(G, B, M))
    return GiveUp(std::move(E));
  Q.More = true;
  return Error::success();
}

} // namespace collc::rt::mpi
