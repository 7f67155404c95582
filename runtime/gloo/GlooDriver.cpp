//===- runtime/gloo/GlooDriver.cpp - Ranks as processes, over Gloo ---------===//

#include "runtime/gloo/GlooDriver.h"

#include "runtime/exec/Timeout.h"
#include "runtime/gloo/GlooFailure.h"
#include "runtime/gloo/GlooReduction.h"
#include "runtime/gloo/GlooSmallAllReduce.h"
#include "runtime/gloo/GlooStore.h"
#include "runtime/gloo/GroupStore.h"
#include "runtime/gloo/ProbedStore.h"
#include "runtime/gloo/WatchedMesh.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>

using namespace llvm;

namespace collc::rt::gloo {

/// One process's membership of one Gloo group: the connected context, the
/// peers' addresses (to name them in errors), and the first failure.
class Membership {
public:
  Membership(std::string Name, int Rank, int Size)
      : Name(std::move(Name)), Rank(Rank), Size(Size),
        SmallAllReduceLimit(smallAllReduceBytes(Size)) {}

  const std::string Name;
  const int Rank, Size;
  /// Wire bytes below which an all_reduce goes by doubling (GlooSmallAllReduce.h).
  const uint64_t SmallAllReduceLimit;
  std::shared_ptr<::gloo::rendezvous::Context> Ctx;
  /// "[HOST]:PORT" of every peer's pair to this rank, "" for this rank.
  std::vector<std::string> Addresses;
  std::atomic<int64_t> TimeoutMs{defaultTimeout().count()};
  /// Collectives enqueued and not yet run.
  std::atomic<uint64_t> Pending{0};
  /// Splits of this group so far (each is collective, so every member
  /// counts alike and the children's names agree).
  uint64_t Splits = 0;
  /// The small all_reduce's receive buffer and the peer it waits for
  /// (GlooSmallAllReduce.h); used under the group's lock.
  std::vector<char> SmallScratch;
  int Awaited = -1;

  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(TimeoutMs.load()); }

  /// Runs \p Body (Gloo calls) under the group's lock; a Gloo exception
  /// becomes an error naming \p What and the peer, and breaks the group.
  /// Without \p Exclusive the lock is held only around the checks (the
  /// wait of a posted send or recv, which others must not wait behind).
  Error run(const char *What, function_ref<void()> Body, bool Exclusive = true) {
    std::unique_lock<std::mutex> L(M);
    if (Error E = brokenError())
      return E;
    if (!Exclusive)
      L.unlock();
    std::string Text;
    try {
      Body();
      return Error::success();
    } catch (const std::exception &X) {
      Text = X.what();
    } catch (...) {
      Text = "an exception that is not a std::exception";
    }
    if (!L.owns_lock())
      L.lock();
    GlooFailure F = classifyFailure(Text, Addresses);
    bool Answered = true; // named by its pair, not as the peer awaited
    if (F.Peer < 0)
      F.Peer = probeLostPeer(Answered);
    Awaited = -1;
    std::string Msg;
    if (F.Peer >= 0 && F.Kind == ErrorKind::Timeout && !Answered)
      Msg = formatv("{0} in group '{1}' on rank {2}: rank {3} did not answer within {4} ms "
                    "(it is missing, or waits for another; gloo: {5})",
                    What, Name, Rank, F.Peer, TimeoutMs.load(), Text);
    else if (F.Peer >= 0 && F.Kind == ErrorKind::Timeout)
      Msg = formatv("{0} in group '{1}' on rank {2}: rank {3} did not arrive within {4} ms "
                    "(gloo: {5})",
                    What, Name, Rank, F.Peer, TimeoutMs.load(), Text);
    else if (int64_t Ended = F.Kind != ErrorKind::Timeout ? endedInstead(F.Peer) : -1; Ended >= 0) {
      Msg = formatv("{0} in group '{1}' on rank {2}: lost rank {3} (its process is no longer "
                    "running; rank {4}, whose connection closed, still runs: it failed after "
                    "rank {3} was lost; gloo: {5})",
                    What, Name, Rank, Ended, F.Peer, Text);
      F.Peer = Ended;
    } else if (F.Peer >= 0)
      Msg = formatv("{0} in group '{1}' on rank {2}: lost rank {3} (gloo: {4})", What, Name, Rank,
                    F.Peer, Text);
    else
      Msg = formatv("{0} in group '{1}' on rank {2} failed (timeout {3} ms; gloo: {4})", What,
                    Name, Rank, TimeoutMs.load(), Text);
    if (F.Peer >= 0 && F.Kind == ErrorKind::Backend)
      F.Kind = ErrorKind::PeerLost;
    Broken = Failure{F.Kind, Msg, F.Peer};
    return makeError(F.Kind, Msg, F.Peer);
  }

  /// The failure that broke the group, as an error; success if none.
  Error brokenError() const {
    if (!Broken)
      return Error::success();
    return makeError(ErrorKind::Broken,
                     formatv("group '{0}' is broken by an earlier failure: {1}", Name,
                             Broken->Message),
                     Broken->Peer);
  }
  /// Never blocks. Also finds a peer on this machine whose process ended
  /// since the last operation (PeersHere): the group breaks then, as the
  /// next operation would break it.
  Error health() {
    std::unique_lock<std::mutex> L(M, std::try_to_lock);
    if (!L.owns_lock())
      return Error::success(); // busy running an operation, so not (yet) broken
    if (Error E = brokenError())
      return E;
    for (const auto &[R, Process] : PeersHere)
      if (Process.gone()) {
        std::string Msg = formatv("group '{0}' on rank {1}: lost rank {2} (process {3} is no "
                                  "longer running)",
                                  Name, Rank, R, Process.name());
        Broken = Failure{ErrorKind::PeerLost, Msg, int64_t(R)};
        return makeError(ErrorKind::PeerLost, Msg, int64_t(R));
      }
    return Error::success();
  }

  /// The peers on this machine, by rank, as their claims name them: a
  /// peer's end is seen in no message (nothing is sent while no operation
  /// runs), but its process can be looked up (ClaimHolder.h).
  std::vector<std::pair<size_t, ClaimHolder>> PeersHere;

private:
  /// A connection closed by peer \p Named may only pass a failure on: a
  /// rank whose operation failed breaks its group and closes its pairs
  /// (the ring neighbour of a killed rank, say). Where \p Named still runs
  /// on this machine and another peer here has ended, the ended one is the
  /// cause: its rank; else -1.
  int64_t endedInstead(int64_t Named) const {
    if (Named < 0)
      return -1;
    auto NamedPeer =
        llvm::find_if(PeersHere, [&](const auto &P) { return int64_t(P.first) == Named; });
    if (NamedPeer == PeersHere.end() || !NamedPeer->second.runningHere())
      return -1;
    for (const auto &[R, Process] : PeersHere)
      if (Process.gone())
        return int64_t(R);
    return -1;
  }
  /// After a failure that names nobody (a timeout): a pair whose peer is
  /// gone holds its error ("connection closed by peer"), and a send on it
  /// rethrows it at once. A pair can also hold the error of our own timed
  /// out wait, which blames nobody; so a peer whose pair says it is lost
  /// wins, then the peer the failed wait was for (where known: \p Answered
  /// is then false), and only then one whose pair fails at all. The group
  /// is broken anyway, so a probe's stray message harms no one.
  int64_t probeLostPeer(bool &Answered) {
    if (!Ctx)
      return -1;
    static char Probe = 0;
    int64_t Failing = -1;
    for (int R = 0; R != Size; ++R) {
      if (R == Rank)
        continue;
      try {
        auto Buf = Ctx->createUnboundBuffer(&Probe, 0);
        Buf->send(R, ProbeSlot);
      } catch (const std::exception &X) {
        if (classifyFailure(X.what(), {}).Kind == ErrorKind::PeerLost)
          return R;
        if (Failing < 0)
          Failing = R;
      }
    }
    Answered = Awaited < 0;
    return Awaited >= 0 ? Awaited : Failing;
  }
  struct Failure {
    ErrorKind Kind;
    std::string Message;
    int64_t Peer;
  };
  std::mutex M; ///< one Gloo operation at a time on the context
  std::optional<Failure> Broken;

public:
  /// Slots of our own unbound-buffer traffic, apart from Gloo's collectives'
  /// (whose prefixes are 0x01..0x08).
  static inline const uint64_t PointToPointSlot = ::gloo::Slot::build(0x60, 0);
  static inline const uint64_t ProbeSlot = ::gloo::Slot::build(0x61, 0);
  static inline const uint64_t SmallAllReduceSlot = ::gloo::Slot::build(0x62, 0);
};

namespace {

using Communicator = GlooDriver::Communicator;

std::mutex JoinMutex; // the store serves one join at a time

Error checkComm(const Communicator &C) { return checkCommunicator(C); }

/// What the argument checks (HostDriverChecks.h) need of \p C.
HostGroupView view(const Communicator &C) { return {C->Size, C->Rank}; }

/// Queues \p Body on \p S; it runs under the group's lock, with Gloo's
/// exceptions turned into errors.
template <typename F> Error enqueue(const Communicator &C, HostStream *S, const char *What, F Body) {
  if (!S)
    return noStreamError();
  ++C->Pending;
  S->enqueue([C, What, Body = std::move(Body)]() mutable -> Error {
    Error E = C->run(What, [&] { Body(*C); });
    --C->Pending;
    return E;
  });
  return Error::success();
}

/// A Gloo group name is a store prefix, and FileStore makes each key a
/// file: keep [A-Za-z0-9._-] and escape the rest (as _XX).
std::string storePrefix(StringRef Name) {
  std::string Out = "collc_";
  for (char Ch : Name) {
    if (isAlnum(Ch) || Ch == '.' || Ch == '-')
      Out += Ch;
    else
      Out += formatv("_{0:x-2}", unsigned(uint8_t(Ch))).str();
  }
  return Out;
}

/// Sets Gloo's typed input/output of an allreduce with elements of
/// \p Size bytes (the reduce function does the arithmetic).
template <typename Set> void withWord(unsigned Size, Set &&Fn) {
  switch (Size) {
  case 1:
    return Fn(uint8_t());
  case 2:
    return Fn(uint16_t());
  case 4:
    return Fn(uint32_t());
  default:
    return Fn(uint64_t());
  }
}

/// The allreduce of \p Count wire elements of \p Wire, in place on \p Data
/// or from \p In: by recursive doubling when small (GlooSmallAllReduce.h),
/// else Gloo's ring.
void glooAllreduce(Membership &M, const char *In, char *Data, uint64_t Count, ElemType Wire,
                   ReduceOp Op) {
  if (Count * elemTypeBytes(Wire) < M.SmallAllReduceLimit)
    return recursiveDoublingAllReduce(
        {*M.Ctx, M.Rank, M.Size, M.timeout(), Membership::SmallAllReduceSlot}, In, Data, Count,
        elemTypeBytes(Wire), wireReducer(Wire, Op), M.SmallScratch, M.Awaited);
  ::gloo::AllreduceOptions O(M.Ctx);
  O.setTimeout(M.timeout());
  withWord(elemTypeBytes(Wire), [&](auto Word) {
    using W = decltype(Word);
    if (In && In != Data)
      O.setInput(reinterpret_cast<W *>(const_cast<char *>(In)), Count);
    O.setOutput(reinterpret_cast<W *>(Data), Count);
  });
  PairReduce Fn = wireReducer(Wire, Op);
  // Two ranks: put the operands in rank order, as the reference does (Gloo
  // passes this rank's partial, inside Data, and the peer's, in scratch),
  // so even min/max ties of -0 and +0 come out bit for bit. The reduce
  // function reaches this by address, which std::function stores inline
  // (a capture of it all would be allocated on every call); it outlives
  // the call to Gloo below.
  struct RankOrder {
    const char *Lo, *Hi;
    bool PeerFirst;
    PairReduce Fn;
  } Order{Data, Data + Count * elemTypeBytes(Wire), M.Rank == 1, Fn};
  if (M.Size != 2) {
    O.setReduceFunction(Fn);
  } else {
    O.setReduceFunction([R = &Order](void *Out, const void *A, const void *B, size_t N) {
      bool AMine = A >= R->Lo && A < R->Hi;
      if (AMine == R->PeerFirst)
        R->Fn(Out, B, A, N);
      else
        R->Fn(Out, A, B, N);
    });
  }
  ::gloo::allreduce(O);
}

/// all_reduce of \p Count elements of \p T from \p Src into \p Dst, or
/// reduce_scatter of chunk \p Chunk (Dst gets Count / Size elements): the
/// wire staging of GlooReduction.h around Gloo's allreduce.
void reduce(Membership &M, const char *Src, char *Dst, uint64_t Count, ElemType T, ReduceOp Op,
            double Scale, std::optional<int> Chunk) {
  ElemType Wire = wireType(T);
  uint64_t Keep = Chunk ? Count / uint64_t(M.Size) : Count;
  uint64_t First = Chunk ? Keep * uint64_t(*Chunk) : 0;
  if (!Chunk && !needsStaging(T, Op)) {
    glooAllreduce(M, Src, Dst, Count, Wire, Op);
    if (needsFinish(T, Op))
      fromWire(T, Op, unsigned(M.Size), Dst, Dst, Count);
    return;
  }
  std::vector<char> Staged(Count * elemTypeBytes(Wire));
  if (needsStaging(T, Op))
    toWire(T, Op, Scale, Src, Staged.data(), Count);
  else if (Count)
    std::memcpy(Staged.data(), Src, Staged.size());
  glooAllreduce(M, nullptr, Staged.data(), Count, Wire, Op);
  fromWire(T, needsFinish(T, Op) ? Op : ReduceOp::Sum, unsigned(M.Size),
           Staged.data() + First * elemTypeBytes(Wire), Dst, Keep);
}

/// Every failure of a join, in one form: "rank R of N could not join gloo
/// group 'G'" and then the rest.
using JoinErrorFn = function_ref<Error(ErrorKind Kind, const Twine &Rest, int64_t Peer)>;

/// Claims this rank, connects the mesh, and exchanges the address each
/// peer's pair to this rank listens on (one per pair), which Gloo's errors
/// about that pair quote: to name peers in errors. Throws what the store
/// and Gloo throw.
void connectMember(Membership &M, GroupStore &Group,
                   std::shared_ptr<::gloo::transport::Device> &Device, size_t Rank, size_t Ranks) {
  Group.claimRank(Rank, Ranks);
  auto Mesh = std::make_shared<WatchedMeshContext>(int(Rank), int(Ranks));
  Mesh->setTimeout(M.timeout());
  Mesh->connectWatched(Group, Device);
  M.Ctx = std::move(Mesh);
  M.Addresses.assign(Ranks, "");
  auto Key = [](size_t From, size_t To) {
    return "collc.address." + std::to_string(From) + "." + std::to_string(To);
  };
  for (size_t R = 0; R != Ranks; ++R) {
    if (R == Rank)
      continue;
    std::string Mine = listeningAddress(M.Ctx->getPair(int(R))->address().str());
    Group.set(Key(Rank, R), std::vector<char>(Mine.begin(), Mine.end()));
  }
  for (size_t R = 0; R != Ranks; ++R) {
    if (R == Rank)
      continue;
    std::vector<char> A = Group.get(Key(R, Rank));
    M.Addresses[R].assign(A.begin(), A.end());
  }
  M.PeersHere = Group.peersSeenFromHere();
}

/// A join begun at \p Began that Gloo failed with \p Text (\p Limit ms
/// its timeout): the store's own failures, the cause the ranks posted, a
/// timeout naming the ranks that never came, else what Gloo said.
Error explainJoinFailure(const std::string &Text, GroupStore &Group, const ProbedStore &Store,
                         std::chrono::steady_clock::time_point Began, int64_t Limit,
                         JoinErrorFn JoinError) {
  GlooFailure F = classifyFailure(Text, {});
  // Gloo's FileStore never overwrites a key: a directory that served an
  // earlier run with the same plan holds its keys.
  if (StringRef(Text).contains("File already exists"))
    return JoinError(ErrorKind::InvalidArgument,
                     ": the rendezvous directory holds the keys of an earlier run (give each run "
                     "a new or empty directory; gloo: " +
                         Text + ")",
                     -1);
  // Nor is a key it cannot write a peer that did not come.
  if (StringRef(Text).contains("File cannot be created"))
    return JoinError(ErrorKind::Backend,
                     ": the rendezvous directory cannot be written (gloo: " + Text + ")", -1);
  // The store failed (a key it wrote empty on a full disk, a Redis server
  // that went away, the program's store: ExternalProbedStore.h): no rank
  // is late.
  if ((StringRef(Text).contains("file_store.cc") || StringRef(Text).contains("redis_store.cc") ||
       StringRef(Text).startswith("store:")) &&
      !StringRef(Text).contains("Wait timeout"))
    return JoinError(ErrorKind::Backend,
                     formatv(": the rendezvous {0} failed (gloo: {1})", Store.kind(),
                             Store.explain(Text)),
                     -1);
  // What the ranks know of the cause: the refusal a rank posted (the first
  // failure, which it saw), else a peer that ended after it posted its
  // address (Gloo could not connect to it), named as a wait names one that
  // ended before. Not the peer this rank's connect waited for, which may
  // have failed and ended for that same cause.
  try {
    Group.throwKnownCause();
  } catch (const PeerGone &X) {
    return JoinError(ErrorKind::PeerLost, formatv(": {0} (gloo: {1})", X.what(), Text),
                     int64_t(X.Rank));
  } catch (const JoinRefused &X) {
    return JoinError(ErrorKind::InvalidArgument, formatv(": {0} (gloo: {1})", X.what(), Text),
                     X.Blamed ? int64_t(*X.Blamed) : -1);
  } catch (const std::exception &) {
    // The store failed too: the error says what Gloo said.
  }
  int64_t Spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - Began)
                      .count();
  // Gloo's check of a peer's address fails on bytes that no rank's
  // transport wrote, whenever it reads them.
  if (StringRef(Text).contains("sizeof(impl_) == bytes.size()"))
    return JoinError(ErrorKind::Backend,
                     ": a peer's address in the rendezvous is not one that Gloo wrote (keys "
                     "written by something other than the ranks of this run?) (gloo: " +
                         Text + ")",
                     -1);
  // A join that gave up at its timeout, whatever Gloo's words for it,
  // naming the ranks no process claimed (killed or never started).
  if (F.Kind == ErrorKind::Timeout || (F.Kind == ErrorKind::Backend && Spent >= Limit * 9 / 10)) {
    std::vector<size_t> Absent;
    try {
      Absent = Group.unclaimedRanks();
    } catch (const std::exception &) {
      // The store failed too: the error says what Gloo said.
    }
    auto Name = [](size_t R) { return std::to_string(R); };
    std::string Missing =
        Absent.empty() ? ""
                       : formatv("{0} {1} never came; ", Absent.size() == 1 ? "rank" : "ranks",
                                 llvm::join(map_range(Absent, Name), ", "))
                             .str();
    return JoinError(ErrorKind::Timeout,
                     formatv(" within {0} ms (every rank must join; {1}gloo: {2})", Limit,
                             Missing, Text),
                     Absent.size() == 1 ? int64_t(Absent[0]) : -1);
  }
  // Otherwise nothing timed out (each wait of a join has the whole
  // timeout, so a join may fail later than it).
  return JoinError(F.Kind,
                   formatv(": Gloo failed after {0} ms (the timeout is {1} ms) (gloo: {2})",
                           Spent, Limit, Text),
                   -1);
}

} // namespace

Expected<GlooDriver::UniqueId> GlooDriver::groupId(const CommunicationId &Id) {
  if (Error E = checkGroupName(Id))
    return E;
  return Id.Name;
}

Expected<GlooDriver::Communicator> GlooDriver::join(UniqueId Id, size_t Ranks, size_t Rank) {
  return joinWatching(std::move(Id), Ranks, Rank, {});
}

Expected<GlooDriver::Communicator> GlooDriver::joinWatched(const Communicator &Parent,
                                                           ArrayRef<int32_t> ParentRanks,
                                                           UniqueId Id, size_t Rank) {
  // The members' processes, known from the parent's join.
  std::vector<std::pair<size_t, ClaimHolder>> Known;
  if (Parent)
    for (size_t I = 0; I != ParentRanks.size(); ++I)
      for (const auto &[ParentRank, Process] : Parent->PeersHere)
        if (int64_t(ParentRank) == ParentRanks[I])
          Known.emplace_back(I, Process);
  return joinWatching(std::move(Id), ParentRanks.size(), Rank, std::move(Known));
}

Expected<GlooDriver::Communicator>
GlooDriver::joinWatching(UniqueId Id, size_t Ranks, size_t Rank,
                         std::vector<std::pair<size_t, ClaimHolder>> KnownPeers) {
  if (Error E = checkJoin("a gloo", MaxRanks, Ranks, Rank))
    return E;
  Expected<std::shared_ptr<ProbedStore>> Store = processStore();
  if (!Store)
    return Store.takeError();
  auto M = std::make_shared<Membership>(Id, int(Rank), int(Ranks));
  std::lock_guard<std::mutex> L(JoinMutex);
  std::string Text;
  GroupStore Group(**Store, storePrefix(Id), M->timeout());
  Group.watchKnownPeers(std::move(KnownPeers));
  auto Began = std::chrono::steady_clock::now();
  Expected<std::shared_ptr<::gloo::transport::Device>> Device = processDevice();
  if (!Device) {
    // Only this rank knows (its COLLC_GLOO_HOSTNAME, say): the others,
    // waiting for it in the join, are told through the store at once.
    std::string Why;
    Error E = handleErrors(Device.takeError(), [&](std::unique_ptr<RuntimeError> R) -> Error {
      Why = R->text();
      return Error(std::move(R));
    });
    try {
      Group.postFailure(Rank, formatv("rank {0} cannot take part: {1}", Rank, Why));
    } catch (const std::exception &) {
      // The store failed too: the others wait out their timeout.
    }
    return E;
  }
  auto JoinError = [&](ErrorKind Kind, const Twine &Rest, int64_t Peer) {
    return makeError(
        Kind, formatv("rank {0} of {1} could not join gloo group '{2}'", Rank, Ranks, Id) + Rest,
        Peer);
  };
  try {
    connectMember(*M, Group, *Device, Rank, Ranks);
    return M;
  } catch (const PeerGone &X) {
    return JoinError(ErrorKind::PeerLost, ": " + Twine(X.what()), int64_t(X.Rank));
  } catch (const JoinRefused &X) {
    return JoinError(ErrorKind::InvalidArgument, ": " + Twine(X.what()),
                     X.Blamed ? int64_t(*X.Blamed) : -1);
  } catch (const StoreWriteFailed &X) {
    return JoinError(ErrorKind::Backend,
                     formatv(": the rendezvous {0} cannot be written ({1})", (*Store)->kind(),
                             X.what()),
                     -1);
  } catch (const std::exception &X) {
    Text = X.what();
  }
  return explainJoinFailure(Text, Group, **Store, Began, M->TimeoutMs.load(), JoinError);
}

Error GlooDriver::allReduceScaled(const Communicator &C, const Resource &Src, const Resource &Dst,
                                  Elems E, ReduceOp Op, ElemType T, double Scale, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkReduction(view(C), /*Scatter=*/false, Src, Dst, E, T, Op, Scale))
    return Err;
  if (E.Count == 0)
    return Error::success(); // every rank has the same count: nothing to exchange
  const char *In = Src.Data;
  char *Out = Dst.Data;
  uint64_t Count = E.Count;
  return enqueue(C, S, "all_reduce", [=](Membership &M) {
    reduce(M, In, Out, Count, T, Op, Scale, std::nullopt);
  });
}

Error GlooDriver::reduceScatterScaled(const Communicator &C, const Resource &Src,
                                      const Resource &Dst, Elems E, ReduceOp Op, ElemType T,
                                      double Scale, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkReduction(view(C), /*Scatter=*/true, Src, Dst, E, T, Op, Scale))
    return Err;
  if (E.Count == 0)
    return Error::success();
  const char *In = Src.Data;
  char *Out = Dst.Data;
  uint64_t Count = E.Count * uint64_t(C->Size);
  return enqueue(C, S, "reduce_scatter", [=](Membership &M) {
    reduce(M, In, Out, Count, T, Op, Scale, M.Rank);
  });
}

Error GlooDriver::allGather(const Communicator &C, const Resource &Src, const Resource &Dst,
                            Elems E, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkAllGather(view(C), Src, Dst, E))
    return Err;
  uint64_t Bytes = E.Count * elemTypeBytes(E.Type);
  if (Bytes == 0)
    return Error::success();
  char *In = Src.Data;
  char *Out = Dst.Data;
  return enqueue(C, S, "all_gather", [=](Membership &M) {
    ::gloo::AllgatherOptions O(M.Ctx);
    O.setTimeout(M.timeout());
    // In place (the input is this rank's chunk of the output): no input.
    if (In != Out + Bytes * uint64_t(M.Rank))
      O.setInput(reinterpret_cast<uint8_t *>(In), Bytes);
    O.setOutput(reinterpret_cast<uint8_t *>(Out), Bytes * uint64_t(M.Size));
    ::gloo::allgather(O);
  });
}

Error GlooDriver::broadcast(const Communicator &C, const Resource *Src, const Resource &Dst,
                            Elems E, size_t Root, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkBroadcast(view(C), Src, Dst, E, Root))
    return Err;
  uint64_t Bytes = E.Count * elemTypeBytes(E.Type);
  bool IsRoot = Root == size_t(C->Rank);
  if (Bytes == 0)
    return Error::success();
  char *In = IsRoot ? Src->Data : nullptr;
  char *Out = Dst.Data;
  return enqueue(C, S, "broadcast", [=](Membership &M) {
    ::gloo::BroadcastOptions O(M.Ctx);
    O.setTimeout(M.timeout());
    O.setRoot(int(Root));
    if (In && In != Out)
      O.setInput(reinterpret_cast<uint8_t *>(In), Bytes);
    O.setOutput(reinterpret_cast<uint8_t *>(Out), Bytes);
    ::gloo::broadcast(O);
  });
}

Error GlooDriver::allToAll(const Communicator &C, const Resource &Src, const Resource &Dst,
                           Elems E, size_t Ranks, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkAllToAll(view(C), Src, Dst, E, Ranks))
    return Err;
  uint64_t Bytes = E.Count * elemTypeBytes(E.Type) * Ranks;
  if (Bytes == 0)
    return Error::success();
  char *In = Src.Data;
  char *Out = Dst.Data;
  return enqueue(C, S, "all_to_all", [=](Membership &M) {
    ::gloo::AlltoallOptions O(M.Ctx);
    O.setTimeout(M.timeout());
    O.setInput(reinterpret_cast<uint8_t *>(In), Bytes);
    O.setOutput(reinterpret_cast<uint8_t *>(Out), Bytes);
    ::gloo::alltoall(O);
  });
}

Error GlooDriver::allToAllV(const Communicator &C, const Resource &Src, const Resource &Dst,
                            ElemType T, ArrayRef<uint64_t> SendCounts,
                            ArrayRef<uint64_t> RecvCounts, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Expected<AllToAllVTotals> Totals = checkAllToAllV(view(C), Src, Dst, T, SendCounts, RecvCounts);
      !Totals)
    return Totals.takeError();
  // Gloo takes the chunks in bytes.
  unsigned Size = elemTypeBytes(T);
  std::vector<int64_t> SendBytes, RecvBytes;
  for (uint64_t X : SendCounts)
    SendBytes.push_back(int64_t(X * Size));
  for (uint64_t X : RecvCounts)
    RecvBytes.push_back(int64_t(X * Size));
  // Every rank takes part even when it moves nothing: a peer may still
  // send it an empty chunk, which must not wait for the next one.
  char *In = Src.Data;
  char *Out = Dst.Data;
  return enqueue(C, S, "all_to_all_v",
                 [=, SendBytes = std::move(SendBytes),
                  RecvBytes = std::move(RecvBytes)](Membership &M) {
                   static char Empty = 0;
                   ::gloo::AlltoallvOptions O(M.Ctx);
                   O.setTimeout(M.timeout());
                   O.setInput(reinterpret_cast<uint8_t *>(In ? In : &Empty), SendBytes);
                   O.setOutput(reinterpret_cast<uint8_t *>(Out ? Out : &Empty), RecvBytes);
                   ::gloo::alltoallv(O);
                 });
}

Error GlooDriver::barrier(const Communicator &C, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  return enqueue(C, S, "barrier", [](Membership &M) {
    ::gloo::BarrierOptions O(M.Ctx);
    O.setTimeout(M.timeout());
    ::gloo::barrier(O);
  });
}

/// One unbound-buffer transfer with \p Peer, waited for within the timeout.
/// It is posted under the group's lock and waited for without it, so that
/// sends and recvs on other streams (an exchange, a ring: one stream per
/// peer and direction, runtime/exec/DriverExecutor.h) progress meanwhile.
static Error transfer(Membership &M, char *Data, uint64_t Bytes, int Peer, bool Send) {
  static char Empty = 0;
  const char *What = Send ? "send" : "recv";
  std::unique_ptr<::gloo::transport::UnboundBuffer> Buf;
  if (Error E = M.run(What, [&] {
        Buf = M.Ctx->createUnboundBuffer(Data ? Data : &Empty, Bytes);
        if (Send)
          Buf->send(Peer, Membership::PointToPointSlot);
        else
          Buf->recv(Peer, Membership::PointToPointSlot);
      }))
    return E;
  return M.run(
      What,
      [&] {
        bool Done = Send ? Buf->waitSend(M.timeout()) : Buf->waitRecv(M.timeout());
        if (!Done)
          throw std::runtime_error(formatv("Timed out waiting {0}ms for {1} of {2} bytes with "
                                           "rank {3} to complete",
                                           M.timeout().count(), What, Bytes, Peer)
                                       .str());
      },
      /*Exclusive=*/false);
}

/// Queues a transfer on \p S. Not counted as pending: it may stay in
/// flight on a peer's stream while a collective runs on the caller's thread
/// (allGatherWords), and it holds the membership alive itself.
static Error enqueueTransfer(const Communicator &C, HostStream *S, char *Data, uint64_t Bytes,
                             size_t Peer, bool Send) {
  if (!S)
    return noStreamError();
  S->enqueue([C, Data, Bytes, Peer, Send]() -> Error {
    return transfer(*C, Data, Bytes, int(Peer), Send);
  });
  return Error::success();
}

Error GlooDriver::send(const Communicator &C, const Resource &Src, Elems E, size_t Peer,
                       CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkPointToPoint(view(C), /*Send=*/true, Src, E, Peer))
    return Err;
  return enqueueTransfer(C, S, Src.Data, E.Count * elemTypeBytes(E.Type), Peer, true);
}

Error GlooDriver::recv(const Communicator &C, const Resource &Dst, Elems E, size_t Peer,
                       CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkPointToPoint(view(C), /*Send=*/false, Dst, E, Peer))
    return Err;
  return enqueueTransfer(C, S, Dst.Data, E.Count * elemTypeBytes(E.Type), Peer, false);
}

Expected<std::vector<uint32_t>> GlooDriver::allGatherWords(const Communicator &C,
                                                           ArrayRef<uint32_t> Local, CommStream) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkNothingPending(C->Pending.load()))
    return Err;
  std::vector<uint32_t> Mine(Local.begin(), Local.end());
  std::vector<uint32_t> Out(Local.size() * C->Size);
  if (Out.empty())
    return Out;
  Error E = C->run("all_gather_words", [&] {
    ::gloo::AllgatherOptions O(C->Ctx);
    O.setTimeout(C->timeout());
    O.setInput(Mine.data(), Mine.size());
    O.setOutput(Out.data(), Out.size());
    ::gloo::allgather(O);
  });
  if (E)
    return E;
  return Out;
}

size_t GlooDriver::rankOf(const Communicator &C) { return size_t(C->Rank); }
size_t GlooDriver::sizeOf(const Communicator &C) { return size_t(C->Size); }

Expected<GlooDriver::Communicator> GlooDriver::split(const Communicator &C, int Color, int Key) {
  if (Error Err = checkComm(C))
    return Err;
  uint64_t Epoch = ++C->Splits;
  uint32_t Mine[2] = {uint32_t(Color), uint32_t(Key)};
  Expected<std::vector<uint32_t>> All = allGatherWords(C, Mine);
  if (!All)
    return All.takeError();
  if (Color < 0)
    return Communicator();
  // Members of my color, ordered by key then parent rank.
  std::vector<std::pair<int, int>> Members;
  for (int R = 0; R != C->Size; ++R)
    if (int32_t((*All)[2 * R]) == Color)
      Members.push_back({int32_t((*All)[2 * R + 1]), R});
  llvm::stable_sort(Members);
  size_t NewRank = 0;
  for (size_t I = 0; I != Members.size(); ++I)
    if (Members[I].second == C->Rank)
      NewRank = I;
  std::vector<int32_t> ParentRanks;
  for (const auto &Member : Members)
    ParentRanks.push_back(Member.second);
  std::string Name = formatv("{0}.split{1}.color{2}", C->Name, Epoch, Color);
  Expected<Communicator> Child = joinWatched(C, ParentRanks, Name, NewRank);
  if (Child)
    setTimeout(*Child, C->timeout());
  return Child;
}

Error GlooDriver::health(const Communicator &C) {
  if (Error Err = checkComm(C))
    return Err;
  return C->health();
}

void GlooDriver::setTimeout(const Communicator &C, std::chrono::milliseconds T) {
  if (!C || T.count() <= 0)
    return;
  C->TimeoutMs = T.count();
  if (C->Ctx)
    C->Ctx->setTimeout(T);
}

std::shared_ptr<::gloo::Context> GlooDriver::context(const Communicator &C) {
  return C ? C->Ctx : nullptr;
}

static_assert(CollectiveDriver<GlooDriver>, "the gloo driver implements the driver interface");

} // namespace collc::rt::gloo
