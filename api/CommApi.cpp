//===- api/CommApi.cpp - collc.h: eager communicators ------------------===//
//
// A communicator of one group on the local backend (ranks are threads) or
// a process backend from the runtime's table (runtime/process/: mpi,
// gloo), an rt::EagerComm (runtime/interfaces/EagerComm.h) either way. Its
// tickets are the EagerComm's, packed in one word: the stream in the high
// bits, the operation's place on it in the low ones.
//
//===----------------------------------------------------------------------===//

#include "api/ApiEntry.h"
#include "api/BackendSessions.h"
#include "api/Handles.h"
#include "api/LiveHandles.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/Timeout.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/local/LocalCommunicator.h"
#include "runtime/process/ProcessBackends.h"

#include <chrono>

using namespace llvm;
using namespace collc;
using namespace collc::api;

namespace {

/// A ticket's low bits hold the operation's place on its stream.
constexpr unsigned PlaceBits = 40;

collcTicket_t packTicket(rt::EagerTicket T) {
  return (collcTicket_t(T.Stream) << PlaceBits) | T.Value;
}

Expected<rt::EagerTicket> unpackTicket(collcTicket_t T) {
  rt::EagerTicket E{uint32_t(T >> PlaceBits), T & ((collcTicket_t(1) << PlaceBits) - 1)};
  if (E.Value == 0)
    return makeApiError(collcInvalidArgument,
                        formatv("ticket is {0}: expected a ticket from a call of this "
                                "communicator",
                                T));
  return E;
}

/// Where \p T came from, as a result the caller stores in *\p Ticket.
Error storeTicket(Expected<rt::EagerTicket> T, collcTicket_t *Ticket) {
  if (!T)
    return T.takeError();
  if (T->Value >> PlaceBits)
    return makeApiError(collcInternalError,
                        formatv("operation {0} of a stream does not fit a ticket", T->Value));
  *Ticket = packTicket(*T);
  return Error::success();
}

Expected<ElemType> elemTypeArg(const char *Text) {
  if (Optional<ElemType> T = parseElemType(Text))
    return *T;
  return makeApiError(collcInvalidArgument,
                      formatv("elemType is \"{0}\": expected an element type of the IR (f32, "
                              "f16, bf16, f64, i8, u8, i32, u32, i64, u64, f8e4m3, f8e5m2)",
                              Text));
}

Expected<ReduceOp> reduceOpArg(const char *Text) {
  Optional<ReduceOp> Op = parseReduceOp(Text);
  if (Op && *Op != ReduceOp::PremulSum)
    return *Op;
  return makeApiError(collcInvalidArgument,
                      formatv("op is \"{0}\": expected sum, prod, min, max or avg", Text));
}

/// The element type and reduce op of a reduction, as the caller spelled them.
struct Reduction {
  ElemType T;
  ReduceOp Op;
};

Expected<Reduction> reductionArgs(const char *ElemTypeName, const char *Op) {
  Expected<ElemType> T = elemTypeArg(ElemTypeName);
  if (!T)
    return T.takeError();
  Expected<ReduceOp> R = reduceOpArg(Op);
  if (!R)
    return R.takeError();
  return Reduction{*T, *R};
}

/// This call's use of \p Comm, once: a live communicator, or the refusal.
void useComm(Args &A, collcComm_t Comm) {
  if (!A.uses(Comm))
    A.comm(Comm, "comm");
}

/// Checks that \p Value (a root, a peer) is a rank of \p Comm, once \p Comm
/// is known to be live.
void rankOfComm(Args &A, collcComm_t Comm, int64_t Value, const char *Name) {
  useComm(A, Comm);
  if (A.uses(Comm))
    A.inRange(Value, Name, 0, int64_t(Comm->Comm->size()) - 1);
}

/// The checks every operation shares: a live communicator and a place for
/// the ticket; then \p Issue enqueues.
template <class Fn> Error operation(Args &A, collcComm_t Comm, collcTicket_t *Ticket, Fn &&Issue) {
  useComm(A, Comm);
  A.notNull(Ticket, "ticket", "where to store the ticket");
  if (Error E = A.done())
    return E;
  return storeTicket(Issue(*Comm->Comm), Ticket);
}

/// The communicator of \p Backend; \p Session gets what it needs alive.
Expected<std::unique_ptr<rt::EagerComm>> createOn(StringRef Backend, StringRef Rendezvous,
                                                  StringRef Group, int64_t Rank, int64_t World,
                                                  std::chrono::milliseconds Timeout,
                                                  std::shared_ptr<void> &Session) {
  if (Backend == "local") {
    // Local ranks are threads of this process: they meet by the
    // rendezvous name, as their creators chose it, and the group's.
    std::string Name =
        (Rendezvous.empty() ? std::string("collc") : Rendezvous.str()) + "/" + Group.str();
    return rt::createLocalEagerComm(Name, size_t(World), size_t(Rank), Timeout);
  }
  Expected<rt::RendezvousAddress> Where = prepareProcessBackend(Backend, Rendezvous, Session);
  if (!Where)
    return Where.takeError();
  rt::ProcessPlace Place;
  Place.Rank = Rank;
  Place.World = World;
  Place.Source = "collcCommCreate";
  return rt::createProcessEagerComm(Backend, Place, *Where, ("collc.comm." + Group).str(), Timeout);
}

} // namespace

extern "C" {

collcResult_t collcCommOptionsInitSized(collcCommOptions_t *Options, size_t Size) {
  return entry(__func__, [&] {
    return initVersioned(Options, Size, collcCommOptions_t COLLC_COMM_OPTIONS_INIT, "options");
  });
}

collcResult_t collcCommCreate(int64_t Rank, int64_t World, const collcCommOptions_t *Options,
                              collcComm_t *Out) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Out, "comm", "where to store the communicator")
        .versioned(Options, "options", /*Optional=*/true)
        .inRange(World, "world", 1, int64_t(1) << 20)
        .inRange(Rank, "rank", 0, std::max<int64_t>(World - 1, 0));
    if (Error E = A.done())
      return E;
    collcCommOptions_t O = readVersioned(Options, collcCommOptions_t COLLC_COMM_OPTIONS_INIT);
    A.inRange(O.timeoutMs, "options->timeoutMs", 0, 86400000);
    if (Error E = A.done())
      return E;
    std::chrono::milliseconds Timeout(O.timeoutMs);
    if (!O.timeoutMs) {
      Expected<std::chrono::milliseconds> T = rt::timeoutFromEnvironment();
      if (!T)
        return makeApiError(collcInvalidArgument, toString(T.takeError()));
      Timeout = *T;
    }
    std::string Group = O.group ? O.group : "world";
    if (Group.empty())
      return makeApiError(collcInvalidArgument,
                          "options->group is \"\": expected the group's name (NULL: world)");
    auto H = std::make_unique<collcComm>();
    H->Backend = O.backend ? O.backend : "local";
    Expected<std::unique_ptr<rt::EagerComm>> C = createOn(
        H->Backend, O.rendezvous ? O.rendezvous : "", Group, Rank, World, Timeout, H->Session);
    if (!C)
      return C.takeError();
    H->Comm = std::move(*C);
    *Out = adopt(std::move(H));
    return Error::success();
  });
}

collcResult_t collcCommAllReduce(collcComm_t Comm, void *Data, uint64_t Count,
                                 const char *ElemTypeName, const char *Op, collcTicket_t *Ticket) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(ElemTypeName, "elemType", "an element type").notNull(Op, "op", "a reduce op");
    if (Count)
      A.notNull(Data, "data", "the elements to reduce");
    return operation(A, Comm, Ticket, [&](rt::EagerComm &C) -> Expected<rt::EagerTicket> {
      Expected<Reduction> R = reductionArgs(ElemTypeName, Op);
      if (!R)
        return R.takeError();
      return C.allReduce(R->Op, R->T, Data, Count);
    });
  });
}

collcResult_t collcCommBroadcast(collcComm_t Comm, void *Data, uint64_t Bytes, int64_t Root,
                                 collcTicket_t *Ticket) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Bytes)
      A.notNull(Data, "data", "the bytes to broadcast or receive");
    rankOfComm(A, Comm, Root, "root");
    return operation(A, Comm, Ticket,
                     [&](rt::EagerComm &C) { return C.broadcast(Data, Bytes, size_t(Root)); });
  });
}

collcResult_t collcCommAllGather(collcComm_t Comm, const void *In, void *Out, uint64_t Bytes,
                                 collcTicket_t *Ticket) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Bytes)
      A.notNull(In, "in", "this rank's bytes").notNull(Out, "out", "world x bytes to fill");
    return operation(A, Comm, Ticket,
                     [&](rt::EagerComm &C) { return C.allGather(In, Out, Bytes); });
  });
}

collcResult_t collcCommReduceScatter(collcComm_t Comm, const void *In, void *Out, uint64_t Count,
                                     const char *ElemTypeName, const char *Op,
                                     collcTicket_t *Ticket) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(ElemTypeName, "elemType", "an element type").notNull(Op, "op", "a reduce op");
    if (Count)
      A.notNull(In, "in", "world x count elements").notNull(Out, "out", "count elements");
    return operation(A, Comm, Ticket, [&](rt::EagerComm &C) -> Expected<rt::EagerTicket> {
      Expected<Reduction> R = reductionArgs(ElemTypeName, Op);
      if (!R)
        return R.takeError();
      return C.reduceScatter(R->Op, R->T, In, Out, Count);
    });
  });
}

collcResult_t collcCommAllToAll(collcComm_t Comm, const void *In, void *Out,
                                const char *ElemTypeName, const uint64_t *SendCounts,
                                const uint64_t *RecvCounts, collcTicket_t *Ticket) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(ElemTypeName, "elemType", "an element type")
        .notNull(SendCounts, "sendCounts", "one count per rank")
        .notNull(RecvCounts, "recvCounts", "one count per rank");
    return operation(A, Comm, Ticket, [&](rt::EagerComm &C) -> Expected<rt::EagerTicket> {
      Expected<ElemType> T = elemTypeArg(ElemTypeName);
      if (!T)
        return T.takeError();
      return C.allToAllV(*T, In, Out, makeArrayRef(SendCounts, C.size()),
                         makeArrayRef(RecvCounts, C.size()));
    });
  });
}

collcResult_t collcCommSend(collcComm_t Comm, const void *Data, uint64_t Bytes, int64_t Peer,
                            collcTicket_t *Ticket) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Bytes)
      A.notNull(Data, "data", "the bytes to send");
    rankOfComm(A, Comm, Peer, "peer");
    return operation(A, Comm, Ticket,
                     [&](rt::EagerComm &C) { return C.send(Data, Bytes, size_t(Peer)); });
  });
}

collcResult_t collcCommRecv(collcComm_t Comm, void *Data, uint64_t Bytes, int64_t Peer,
                            collcTicket_t *Ticket) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Bytes)
      A.notNull(Data, "data", "where to receive");
    rankOfComm(A, Comm, Peer, "peer");
    return operation(A, Comm, Ticket,
                     [&](rt::EagerComm &C) { return C.recv(Data, Bytes, size_t(Peer)); });
  });
}

collcResult_t collcCommBarrier(collcComm_t Comm, collcTicket_t *Ticket) {
  return entry(__func__, [&]() -> Error {
    Args A;
    return operation(A, Comm, Ticket, [&](rt::EagerComm &C) { return C.barrier(); });
  });
}

collcResult_t collcCommWait(collcComm_t Comm, collcTicket_t Ticket, int64_t TimeoutMs) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.comm(Comm, "comm").inRange(TimeoutMs, "timeoutMs", -1, 86400000);
    if (Error E = A.done())
      return E;
    Expected<rt::EagerTicket> T = unpackTicket(Ticket);
    if (!T)
      return T.takeError();
    std::optional<std::chrono::milliseconds> Within;
    if (TimeoutMs >= 0)
      Within = std::chrono::milliseconds(TimeoutMs);
    return Comm->Comm->wait(*T, Within);
  });
}

collcResult_t collcCommTest(collcComm_t Comm, collcTicket_t Ticket, int *Done) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.comm(Comm, "comm").notNull(Done, "done", "where to store whether it ran");
    if (Error E = A.done())
      return E;
    Expected<rt::EagerTicket> T = unpackTicket(Ticket);
    if (!T)
      return T.takeError();
    *Done = Comm->Comm->done(*T) ? 1 : 0;
    return Error::success();
  });
}

collcResult_t collcCommDestroy(collcComm_t Comm) {
  return entry(__func__, [&]() -> Error {
    if (!Comm)
      return Error::success();
    Args A;
    A.comm(Comm, "comm");
    if (Error E = A.done())
      return E;
    return destroy(Comm, "comm", A.releaseUse(Comm));
  });
}

} // extern "C"
