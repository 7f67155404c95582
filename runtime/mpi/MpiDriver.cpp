//===- runtime/mpi/MpiDriver.cpp - Processes under mpirun, over Open MPI ---===//

#include "runtime/mpi/MpiDriver.h"

#include "runtime/exec/Timeout.h"
#include "runtime/mpi/AbandonedMemory.h"
#include "runtime/mpi/ArrivalGate.h"
#include "runtime/mpi/MpiSession.h"
#include "runtime/mpi/MpiRequest.h"
#include "runtime/mpi/MpiUserOps.h"
#include "runtime/mpi/PairAllReduce.h"
#include "runtime/mpi/ReduceStaging.h"

#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <cstring>
#include <sched.h>
#include <thread>
#include <variant>

using namespace llvm;

namespace collc::rt::mpi {

namespace {

using Comm = MpiDriver::Communicator;
using Scratch = std::shared_ptr<HostPages>;

/// Present and not broken by an earlier failure.
Error checkComm(const Comm &C) {
  if (Error E = checkCommunicator(C))
    return E;
  return C->check();
}

/// What the argument checks (HostDriverChecks.h) need of \p C.
HostGroupView view(const Comm &C) { return {C->size(), C->rank()}; }

/// Open MPI 4.1's counts and displacements are int.
Error checkCount(StringRef What, uint64_t Count) {
  if (Count <= uint64_t(INT_MAX))
    return Error::success();
  return makeError(ErrorKind::Unsupported,
                   formatv("{0} of {1} elements: MPI counts are int (at most {2})", What, Count,
                           INT_MAX));
}

/// Data movement: unsigned integers of the element's size.
MPI_Datatype moveType(ElemType T) {
  switch (elemTypeBytes(T)) {
  case 1:
    return MPI_UINT8_T;
  case 2:
    return MPI_UINT16_T;
  case 4:
    return MPI_UINT32_T;
  default:
    return MPI_UINT64_T;
  }
}

using Poll = HostStream::Poll;

/// Queues \p Body on \p S as a polled task: Body(G, R, Q) starts its
/// request R (MpiRequest::run), or a gate or a pair's exchange, and polls
/// it on later calls. Each of those starts unless the group broke before it
/// and, once started, runs to its end whatever breaks the group meanwhile:
/// its peers are in the same call, and its memory in use. A send or recv
/// (\p PointToPoint) runs on a peer stream and is not a pending collective.
template <typename F>
Error enqueue(const Comm &C, HostStream *S, F Body, bool PointToPoint = false) {
  if (!S)
    return noStreamError();
  // A plain pointer: the group's destructor waits for what was enqueued.
  MpiGroup *G = C.get();
  G->noteEnqueued(PointToPoint);
  auto Task = [G, PointToPoint, R = MpiRequest(), Body = std::move(Body)](Poll &Q) mutable -> Error {
    Error E = Body(*G, R, Q);
    if (E || !Q.More)
      G->noteRetired(PointToPoint);
    return E;
  };
  // Stored in the stream's queue without an allocation per operation.
  static_assert(sizeof(Task) <= HostStream::Task::InlineBytes);
  S->enqueue(std::move(Task));
  return Error::success();
}

/// Asks to be called again off the issuing thread: what follows blocks or
/// copies every byte, which the thread that goes on computing must not do.
bool deferFromIssuer(Poll &Q) {
  if (Q.MayBlock)
    return false;
  Q.More = true;
  return true;
}

/// Issues one collective (\p Start returns MPI's code) and waits for it on
/// the caller's thread. \p Buffers, all it reads and writes, live on if
/// the wait gives up (AbandonedMemory.h).
template <typename StartF>
Error collective(MpiGroup &G, StringRef What, StartF Start, std::shared_ptr<void> Buffers) {
  uint64_t Seq = G.arrive();
  MPI_Request Req = MPI_REQUEST_NULL;
  if (int Rc = Start(&Req); Rc != MPI_SUCCESS)
    return G.breakWith(mpiError(Rc, What, G.name()));
  Error E = G.wait(Req, What, -1, Seq);
  if (E)
    keepForAbandonedRequest(std::move(Buffers));
  return E;
}

/// Which all_reduces of more than two members (two exchange:
/// PairAllReduce.h) call MPI's blocking collective behind a gate
/// (ArrivalGate.h) instead of MPI_Iallreduce: those of 256 KiB or more that
/// libnbc (Open MPI 4.1's nonblocking collectives) would reduce along a
/// binomial tree, which ran 1.1-1.6x slower than the blocking all_reduce
/// (coll/tuned) here: in a group of 3, in place, or with an operation
/// that does not commute. Otherwise libnbc takes Rabenseifner's
/// reduce-scatter and all-gather, which measured 0.93-1.0x the blocking
/// call's time at 256 KiB-16 MiB on 4 processes, while any gate there cost
/// 3-22% (a rank stops at it instead of starting its share of the
/// exchange). Past a gate the wait is MPI's own, without collc's deadline:
/// a rank that dies inside the call ends the job under mpirun
/// (docs/runtime.md), one that stalls inside MPI is not detected. The
/// members must all make the same kind of call (MPI matches no blocking
/// call with a nonblocking one). Every input is the same on every member
/// but in place, which MPI asks of all members or none: where one rank's
/// buffers alias and another's do not, the gate on the board refuses the
/// call, naming a member that went on without it (MpiGroup::testArrivals).
constexpr size_t GatedBelowRanks = 4;

/// Whether an all_reduce of \p T by \p Op passes MPI's in place: the one
/// source for the gate's decision and the call. A narrow type is widened
/// into scratch and reduced there.
bool wireInPlace(ElemType T, ReduceOp Op, const char *In, const char *Out) {
  return stagesInput(T, Op) ? wireType(T, Op) != T : In == Out;
}

bool overlaps(const char *A, uint64_t ABytes, const char *B, uint64_t BBytes) {
  return ABytes && BBytes && A < B + BBytes && B < A + ABytes;
}

} // namespace

bool MpiDriver::gatesAllReduce(size_t Ranks, uint64_t WireBytes, bool InPlace, ElemType Wire,
                               ReduceOp Op) {
  // Two members exchange (PairAllReduce.h); one waits for nobody.
  if (WireBytes < GatedFromBytes || Ranks <= 2)
    return false; // and no MPI call on the small all_reduce's path
  if (Ranks < GatedBelowRanks || InPlace)
    return true;
  int Commutes = 1;
  MPI_Op_commutative(mpiReduction(Wire, Op).Op, &Commutes);
  return !Commutes;
}

Expected<MpiDriver::UniqueId> MpiDriver::groupId(const CommunicationId &Id) {
  if (Error E = checkGroupName(Id))
    return E;
  return Id.Name;
}

Expected<MpiDriver::Communicator> MpiDriver::join(UniqueId Id, size_t Ranks, size_t Rank) {
  if (Error E = checkMpiReady())
    return E;
  int WorldSize = 0, WorldRank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &WorldSize);
  MPI_Comm_rank(MPI_COMM_WORLD, &WorldRank);
  if (Ranks != size_t(WorldSize) || Rank != size_t(WorldRank))
    return invalidArgument(formatv("group '{0}': joined as rank {1} of {2}, but this process is "
                                   "rank {3} of MPI_COMM_WORLD's {4} (mpi groups other than the "
                                   "world come from split)",
                                   Id, Rank, Ranks, WorldRank, WorldSize));
  std::chrono::milliseconds Limit = defaultTimeout();
  // On the heap: a duplication given up may still write it.
  auto New = std::make_shared<MPI_Comm>(MPI_COMM_NULL);
  MPI_Request Req = MPI_REQUEST_NULL;
  if (int Rc = MPI_Comm_idup(MPI_COMM_WORLD, New.get(), &Req); Rc != MPI_SUCCESS)
    return mpiError(Rc, "MPI_Comm_idup of MPI_COMM_WORLD", Id);
  auto Deadline = std::chrono::steady_clock::now() + Limit;
  for (int Done = 0; !Done;) {
    if (int Rc = MPI_Test(&Req, &Done, MPI_STATUS_IGNORE); Rc != MPI_SUCCESS)
      return mpiError(Rc, "MPI_Comm_idup of MPI_COMM_WORLD", Id);
    if (!Done && std::chrono::steady_clock::now() > Deadline) {
      keepForAbandonedRequest(std::move(New));
      // No board entry exists yet to say who is missing.
      return makeError(ErrorKind::Timeout,
                       formatv("rank {0}: not every rank of MPI_COMM_WORLD joined group '{1}' "
                               "within {2} ms",
                               WorldRank, Id, Limit.count()));
    }
    if (!Done)
      sched_yield();
  }
  return MpiGroup::adopt(*New, Id, Limit);
}

namespace {

/// What allReduceScaled and prepareAllReduce check of their arguments.
Error checkAllReduce(const Comm &C, const HostResource &Src, const HostResource &Dst,
                     HostElements E, ElemType T) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkReduction(view(C), /*Scatter=*/false, Src, Dst, E, T))
    return Err;
  return checkCount("all_reduce", E.Count);
}

} // namespace

bool MpiDriver::setsUpAllReduce(size_t Ranks, uint64_t WireBytes, ElemType T, ReduceOp Op) {
  // Where MPI_Iallreduce serves, on facts every member shares. In place is
  // each rank's own and is left out: below the gate's size it does not
  // change the kind of call (MPI asks it of every member or none, as ever).
  // Two members exchange (PairAllReduce.h); a staged input is written anew
  // at each launch.
  return Ranks > 2 && WireBytes < GatedFromBytes && !stagesInput(T, Op) &&
         PersistentAllReduce::available();
}

std::optional<bool> MpiDriver::passesInPlace(const Communicator &C, const Resource &Src,
                                             const Resource &Dst, ElemType T, ReduceOp Op) {
  if (!C || C->size() <= 2 || stagesInput(T, Op))
    return std::nullopt;
  return wireInPlace(T, Op, Src.Data, Dst.Data);
}

Expected<MpiDriver::PreparedAllReduce>
MpiDriver::prepareAllReduce(const Communicator &C, const Resource &Src, const Resource &Dst,
                            Elems E, ReduceOp Op, ElemType T, double) {
  if (Error Err = checkAllReduce(C, Src, Dst, E, T))
    return Err;
  ElemType W = wireType(T, Op);
  if (!setsUpAllReduce(size_t(C->size()), E.Count * elemTypeBytes(W), T, Op))
    return nullptr;
  const char *In = Src.Data;
  char *Out = Dst.Data;
  Expected<std::shared_ptr<PersistentAllReduce>> Call = PersistentAllReduce::create(
      C, wireInPlace(T, Op, In, Out) ? MPI_IN_PLACE : In, Out, E.Count, mpiReduction(W, Op));
  if (!Call)
    return Call.takeError();
  return std::make_shared<const PreparedCall>(PreparedCall{std::move(*Call), T, Op, Out, E.Count});
}

Error MpiDriver::allReduce(const PreparedAllReduce &P, CommStream S) {
  if (Error Err = checkComm(P->Call->communicator()))
    return Err;
  return enqueue(P->Call->communicator(), S, [P](MpiGroup &G, MpiRequest &R, Poll &Q) -> Error {
    if (Error E = P->Call->run(R, Q))
      return E;
    if (!Q.More && stagesOutput(P->T, P->Op))
      finishOutput(P->T, P->Op, unsigned(G.size()), P->Out, P->Count, P->Out);
    return Error::success();
  });
}

Error MpiDriver::allReduceScaled(const Communicator &C, const Resource &Src, const Resource &Dst,
                                 Elems E, ReduceOp Op, ElemType T, double Scale, CommStream S) {
  if (Error Err = checkAllReduce(C, Src, Dst, E, T))
    return Err;
  uint64_t Count = E.Count;
  const char *In = Src.Data;
  char *Out = Dst.Data;
  ElemType W = wireType(T, Op);
  bool Gated = MpiDriver::gatesAllReduce(size_t(C->size()), Count * elemTypeBytes(W),
                                         wireInPlace(T, Op, In, Out), W, Op);
  // Two members exchange the operands instead (PairAllReduce.h).
  bool Pair = C->size() == 2;
  // The state of a gated call or of the pair's exchange (never both).
  using Way = std::variant<ArrivalGate, PairAllReduce>;
  return enqueue(C, S, [=, Buf = Scratch(), How = Pair ? Way(PairAllReduce()) : Way(ArrivalGate())](
                           MpiGroup &G, MpiRequest &R, Poll &Q) mutable -> Error {
    bool Begun = R.started() || std::visit([](const auto &X) { return X.started(); }, How);
    bool Narrow = W != T, Stages = stagesInput(T, Op);
    unsigned WireSize = elemTypeBytes(W);
    uint64_t Bytes = Count * WireSize;
    uint64_t PeerBytes = Pair ? PairAllReduce::peerElements(Count, WireSize) * WireSize : 0;
    if ((Stages || Pair) && !Begun) {
      if ((Stages || (Pair && PairAllReduce::halves(Count, WireSize))) && deferFromIssuer(Q))
        return Error::success();
      // The staged input, then the peer's part.
      Buf = G.scratch((Stages ? Bytes : 0) + PeerBytes);
      // Out of step with the peers from here: the group breaks.
      if (!Buf->data())
        return G.breakWith(makeError(
            ErrorKind::Backend,
            formatv("all_reduce on {0}: cannot allocate {1} bytes of scratch on this host",
                    G.name(), Buf->size())));
      if (Stages)
        stageInput(T, Op, Scale, In, Count, Buf->data());
    }
    const void *Send = wireInPlace(T, Op, In, Out) ? MPI_IN_PLACE : Stages ? Buf->data() : In;
    char *Wire = Stages && Narrow ? Buf->data() : Out;
    MpiReduction M = mpiReduction(W, Op);
    if (Pair) {
      PairAllReduce::Buffers B{Send == MPI_IN_PLACE ? Wire : static_cast<const char *>(Send), Wire,
                               Buf->data() + (Stages ? Bytes : 0), Count, WireSize};
      if (Error Err = std::get<PairAllReduce>(How).run(G, Q, B, M, Buf))
        return Err;
      if (!Q.More && stagesOutput(T, Op))
        finishOutput(T, Op, 2, Wire, Count, Out);
      return Error::success();
    }
    if (Error Err = Gated ? std::get<ArrivalGate>(How).run(G, Q, "all_reduce", R)
                          : R.run(
                                G, Q, "all_reduce", -1,
                                [&](MPI_Request *Req) {
                                  return MPI_Iallreduce(Send, Wire, int(Count), M.Type, M.Op,
                                                        G.comm(), Req);
                                },
                                Buf))
      return Err;
    if (Q.More || (Gated && deferFromIssuer(Q)))
      return Error::success();
    if (Gated)
      if (int Rc = MPI_Allreduce(Send, Wire, int(Count), M.Type, M.Op, G.comm());
          Rc != MPI_SUCCESS)
        return G.breakWith(mpiError(Rc, "all_reduce", G.name()));
    if (stagesOutput(T, Op))
      finishOutput(T, Op, unsigned(G.size()), Wire, Count, Out);
    return Error::success();
  });
}

Error MpiDriver::reduceScatterScaled(const Communicator &C, const Resource &Src,
                                     const Resource &Dst, Elems E, ReduceOp Op, ElemType T,
                                     double Scale, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkReduction(view(C), /*Scatter=*/true, Src, Dst, E, T))
    return Err;
  uint64_t Bytes = E.Count * elemTypeBytes(T);
  uint64_t N = uint64_t(C->size());
  if (Error Err = checkCount("reduce_scatter", E.Count))
    return Err;
  uint64_t Count = E.Count;
  const char *In = Src.Data;
  char *Out = Dst.Data;
  // In place (the result is this rank's chunk of the source, NCCL's
  // convention) is not MPI's in place (the result at the start): the result
  // lands in scratch and is copied.
  bool Overlap = overlaps(In, Bytes * N, Out, Bytes);
  using Buffers = std::pair<std::vector<char>, std::vector<char>>;
  return enqueue(C, S, [=, Bufs = std::shared_ptr<Buffers>()](MpiGroup &G, MpiRequest &R,
                                                               Poll &Q) mutable -> Error {
    ElemType W = wireType(T, Op);
    unsigned WS = elemTypeBytes(W);
    if (!R.started()) {
      if (stagesInput(T, Op) && deferFromIssuer(Q))
        return Error::success();
      Bufs = std::make_shared<Buffers>();
      if (stagesInput(T, Op)) {
        Bufs->first.resize(Count * N * WS);
        stageInput(T, Op, Scale, In, Count * N, Bufs->first.data());
      }
      if (W != T || Overlap)
        Bufs->second.resize(Count * WS);
    }
    const char *Send = stagesInput(T, Op) ? Bufs->first.data() : In;
    char *Wire = W != T || Overlap ? Bufs->second.data() : Out;
    if (Error Err = R.run(
            G, Q, "reduce_scatter", -1,
            [&](MPI_Request *Req) {
              MpiReduction M = mpiReduction(W, Op);
              return MPI_Ireduce_scatter_block(Send, Wire, int(Count), M.Type, M.Op, G.comm(),
                                               Req);
            },
            Bufs))
      return Err;
    if (!Q.More)
      finishOutput(T, Op, unsigned(G.size()), Wire, Count, Out);
    return Error::success();
  });
}

Error MpiDriver::allGather(const Communicator &C, const Resource &Src, const Resource &Dst,
                           Elems E, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkAllGather(view(C), Src, Dst, E))
    return Err;
  if (Error Err = checkCount("all_gather", E.Count))
    return Err;
  uint64_t Bytes = E.Count * elemTypeBytes(E.Type);
  // In place: this rank's input already is its chunk of the output.
  bool InPlace = Src.Data == Dst.Data + Bytes * uint64_t(C->rank());
  const char *In = Src.Data;
  char *Out = Dst.Data;
  return enqueue(C, S, [=](MpiGroup &G, MpiRequest &R, Poll &Q) -> Error {
    MPI_Datatype Ty = moveType(E.Type);
    return R.run(G, Q, "all_gather", -1, [&](MPI_Request *Req) {
      return MPI_Iallgather(InPlace ? MPI_IN_PLACE : In, int(E.Count), Ty, Out, int(E.Count), Ty,
                            G.comm(), Req);
    });
  });
}

Error MpiDriver::broadcast(const Communicator &C, const Resource *Src, const Resource &Dst,
                           Elems E, size_t Root, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkBroadcast(view(C), Src, Dst, E, Root))
    return Err;
  if (Error Err = checkCount("broadcast", E.Count))
    return Err;
  uint64_t Bytes = E.Count * elemTypeBytes(E.Type);
  bool IsRoot = Root == size_t(C->rank());
  const char *In = IsRoot ? Src->Data : nullptr;
  char *Out = Dst.Data;
  return enqueue(C, S, [=](MpiGroup &G, MpiRequest &R, Poll &Q) -> Error {
    if (!R.started() && In && In != Out) {
      // MPI broadcasts in place: the root's source becomes its destination.
      if (deferFromIssuer(Q))
        return Error::success();
      std::memmove(Out, In, Bytes);
    }
    return R.run(G, Q, "broadcast", -1, [&](MPI_Request *Req) {
      return MPI_Ibcast(Out, int(E.Count), moveType(E.Type), int(Root), G.comm(), Req);
    });
  });
}

Error MpiDriver::allToAll(const Communicator &C, const Resource &Src, const Resource &Dst,
                          Elems E, size_t Ranks, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkAllToAll(view(C), Src, Dst, E, Ranks))
    return Err;
  if (Error Err = checkCount("all_to_all", E.Count))
    return Err;
  const char *In = Src.Data;
  char *Out = Dst.Data;
  return enqueue(C, S, [=](MpiGroup &G, MpiRequest &R, Poll &Q) -> Error {
    MPI_Datatype Ty = moveType(E.Type);
    return R.run(G, Q, "all_to_all", -1, [&](MPI_Request *Req) {
      return MPI_Ialltoall(In == Out ? MPI_IN_PLACE : In, int(E.Count), Ty, Out, int(E.Count), Ty,
                           G.comm(), Req);
    });
  });
}

Error MpiDriver::allToAllV(const Communicator &C, const Resource &Src, const Resource &Dst,
                           ElemType T, ArrayRef<uint64_t> SendCounts, ArrayRef<uint64_t> RecvCounts,
                           CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Expected<AllToAllVTotals> Totals = checkAllToAllV(view(C), Src, Dst, T, SendCounts, RecvCounts);
      !Totals)
    return Totals.takeError();
  size_t N = size_t(C->size());
  // Counts and displacements in elements, as MPI's ints; they must outlive
  // the request.
  auto Table = std::make_shared<std::vector<int>>(4 * N);
  uint64_t Sent = 0, Received = 0;
  for (size_t R = 0; R != N; ++R) {
    if (Error Err = checkCount("all_to_all_v", std::max(Sent, Received)))
      return Err;
    (*Table)[R] = int(SendCounts[R]);
    (*Table)[N + R] = int(Sent);
    (*Table)[2 * N + R] = int(RecvCounts[R]);
    (*Table)[3 * N + R] = int(Received);
    if (Error Err = checkCount("all_to_all_v", std::max(SendCounts[R], RecvCounts[R])))
      return Err;
    Sent += SendCounts[R];
    Received += RecvCounts[R];
  }
  const char *In = Src.Data;
  char *Out = Dst.Data;
  return enqueue(C, S, [=](MpiGroup &G, MpiRequest &R, Poll &Q) -> Error {
    MPI_Datatype Ty = moveType(T);
    const int *V = Table->data();
    return R.run(
        G, Q, "all_to_all_v", -1,
        [&](MPI_Request *Req) {
          return MPI_Ialltoallv(In, V, V + N, Ty, Out, V + 2 * N, V + 3 * N, Ty, G.comm(), Req);
        },
        Table);
  });
}

Error MpiDriver::barrier(const Communicator &C, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  return enqueue(C, S, [](MpiGroup &G, MpiRequest &R, Poll &Q) -> Error {
    return R.run(G, Q, "barrier", -1,
                 [&](MPI_Request *Req) { return MPI_Ibarrier(G.comm(), Req); });
  });
}

Error MpiDriver::send(const Communicator &C, const Resource &Src, Elems E, size_t Peer,
                      CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkPointToPoint(view(C), /*Send=*/true, Src, E, Peer))
    return Err;
  if (Error Err = checkCount("send", E.Count))
    return Err;
  const char *In = Src.Data;
  return enqueue(C, S, [=](MpiGroup &G, MpiRequest &R, Poll &Q) -> Error {
    return R.run(G, Q, "send", int64_t(Peer), [&](MPI_Request *Req) {
      return MPI_Isend(In, int(E.Count), moveType(E.Type), int(Peer), 0, G.comm(), Req);
    });
  }, /*PointToPoint=*/true);
}

Error MpiDriver::recv(const Communicator &C, const Resource &Dst, Elems E, size_t Peer,
                      CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkPointToPoint(view(C), /*Send=*/false, Dst, E, Peer))
    return Err;
  if (Error Err = checkCount("recv", E.Count))
    return Err;
  char *Out = Dst.Data;
  return enqueue(C, S, [=](MpiGroup &G, MpiRequest &R, Poll &Q) -> Error {
    MPI_Datatype Ty = moveType(E.Type);
    MPI_Status Status;
    if (Error Err = R.run(
            G, Q, "recv", int64_t(Peer),
            [&](MPI_Request *Req) {
              return MPI_Irecv(Out, int(E.Count), Ty, int(Peer), 0, G.comm(), Req);
            },
            nullptr, &Status))
      return Err;
    if (Q.More)
      return Error::success();
    int Got = 0;
    MPI_Get_count(&Status, Ty, &Got);
    if (uint64_t(Got) != E.Count)
      return makeError(ErrorKind::Mismatch,
                       formatv("recv in group '{0}': rank {1} sent {2} {3} elements; rank {4} "
                               "expected {5}",
                               G.name(), Peer, Got, elemTypeName(E.Type), G.rank(), E.Count),
                       int64_t(Peer));
    return Error::success();
  }, /*PointToPoint=*/true);
}

Expected<std::vector<uint32_t>> MpiDriver::allGatherWords(const Communicator &C,
                                                          ArrayRef<uint32_t> Local, CommStream) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkNothingPending(C->pendingCollectives()))
    return Err;
  if (Error Err = checkCount("all_gather_words", Local.size()))
    return Err;
  // This rank's words, then everyone's.
  using Words = std::pair<std::vector<uint32_t>, std::vector<uint32_t>>;
  auto Bufs = std::make_shared<Words>(std::vector<uint32_t>(Local.begin(), Local.end()),
                                      std::vector<uint32_t>(Local.size() * size_t(C->size())));
  if (Error Err = collective(
          *C, "all_gather_words",
          [&](MPI_Request *R) {
            return MPI_Iallgather(Bufs->first.data(), int(Local.size()), MPI_UINT32_T,
                                  Bufs->second.data(), int(Local.size()), MPI_UINT32_T,
                                  C->comm(), R);
          },
          Bufs))
    return Err;
  return std::move(Bufs->second);
}

Expected<MpiDriver::Communicator> MpiDriver::split(const Communicator &C, int Color, int Key) {
  // Everyone's (color, key) first, bounded: MPI_Comm_split itself blocks
  // without a deadline, but once every rank has arrived here it returns.
  uint32_t Mine[2] = {uint32_t(Color), uint32_t(Key)};
  Expected<std::vector<uint32_t>> All = allGatherWords(C, Mine);
  if (!All)
    return All.takeError();
  uint64_t Epoch = C->arrive(); // numbers the split (and keeps the board in step)
  MPI_Comm New = MPI_COMM_NULL;
  if (int Rc = MPI_Comm_split(C->comm(), Color < 0 ? MPI_UNDEFINED : Color, Key, &New);
      Rc != MPI_SUCCESS)
    return C->breakWith(mpiError(Rc, "MPI_Comm_split", C->name()));
  if (Color < 0)
    return Communicator();
  Expected<Communicator> Child =
      MpiGroup::adopt(New, formatv("{0}.split{1}.color{2}", C->name(), Epoch, Color).str(),
                      C->timeout());
  return Child;
}

Error MpiDriver::health(const Communicator &C) { return checkComm(C); }

void MpiDriver::setTimeout(const Communicator &C, std::chrono::milliseconds T) {
  if (C)
    C->setTimeout(T);
}

} // namespace collc::rt::mpi
