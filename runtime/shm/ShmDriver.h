//===- runtime/shm/ShmDriver.h - Shared memory within a host, an engine across -*- C++ -*-===//
//
// The driver of a process backend (mpi, gloo: one process per rank) with
// the shared-memory transport: ShmDriver<Engine> is the engine's driver
// (MpiDriver, GlooDriver), with each group's bytes carried by the path
// chosen for it when it forms (PathChoice.h):
//  - shm: the group's processes share one host; every collective, send and
//    recv runs on its team (ShmTeam.h: the local backend's algorithms and
//    kernels across processes);
//  - hierarchical: within each host on its team, across hosts on the
//    engine, for all_reduce (ShmTeam::allReduceAround, over a split of the
//    engine's communicator into the members of one local index, one per
//    host); other collectives on the engine;
//  - engine: the engine's driver, as without this transport.
// A group forms through the engine's own communicator (its all-gather of
// words is the bootstrap: HostMeeting.h), so processes meet as they always
// did: under mpirun, through the Gloo store.
//
// Besides the ExecutorDriver calls, the executor's hooks: pathOf (what
// `collc run` and `collc bench` print) and shareHostMemory (an arena on
// each host for the executor's buffers, so a plan's buckets are read and
// written in place).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_SHMDRIVER_H
#define COLLC_RUNTIME_SHM_SHMDRIVER_H

#include "runtime/exec/GroupJoin.h"
#include "runtime/exec/HostArena.h"
#include "runtime/exec/HostDriverBase.h"
#include "runtime/local/Kernels.h"
#include "runtime/shm/PathChoice.h"
#include "runtime/shm/TeamFormation.h"

#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <concepts>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>

namespace collc::rt::shm {

/// One process's membership of one group of ShmDriver<E>.
template <class E> class ShmGroup {
public:
  ShmGroup(typename E::Communicator Engine, std::string Name, std::chrono::milliseconds Timeout)
      : Engine(std::move(Engine)), Name(std::move(Name)) {
    Wait.Timeout = Timeout;
  }
  /// Waits for the team's operations already enqueued (they hold a plain
  /// pointer), as the engines' groups do.
  ~ShmGroup() {
    while (Enqueued.load(std::memory_order_acquire) != Retired.load(std::memory_order_acquire))
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  ShmGroup(const ShmGroup &) = delete;
  ShmGroup &operator=(const ShmGroup &) = delete;

  typename E::Communicator Engine;
  std::string Name;
  GroupHosts Hosts;
  PathChoice Choice;
  /// This host's members (shm, hierarchical).
  std::shared_ptr<ShmTeam> Team;
  /// Hierarchical: this local index's member on every host, on the engine,
  /// and the stream its all_reduces run on (inside a team task).
  typename E::Communicator Across{};
  typename E::StreamOwner AcrossStream{};
  local::WaitPolicy Wait;
  /// Splits of this group so far (names the children).
  unsigned Splits = 0;
  std::atomic<uint64_t> Enqueued{0}, Retired{0};

  int rank() const { return Hosts.Rank; }
  int size() const { return Hosts.Size; }
  DataPath path() const { return Choice.Path; }
};

namespace detail {
/// GroupsBySplit where the engine has it (MPI forms groups by split).
template <class E> struct SplitTraitOf {};
template <class E>
  requires requires { E::GroupsBySplit; }
struct SplitTraitOf<E> {
  static constexpr bool GroupsBySplit = E::GroupsBySplit;
};

/// The engine's all_reduces set up at capture (MPI's persistent
/// collectives), for groups on the engine path; none on the others.
template <class E> struct PreparedTraitOf {};
template <class E>
  requires requires { typename E::PreparedAllReduce; }
struct PreparedTraitOf<E> {
  using PreparedAllReduce = typename E::PreparedAllReduce;
  static std::optional<bool> passesInPlace(const std::shared_ptr<ShmGroup<E>> &C,
                                           const HostResource &Src, const HostResource &Dst,
                                           ElemType T, ReduceOp Op) {
    if (!C || C->path() != DataPath::Engine)
      return std::nullopt;
    return E::passesInPlace(C->Engine, Src, Dst, T, Op);
  }
  static llvm::Expected<PreparedAllReduce>
  prepareAllReduce(const std::shared_ptr<ShmGroup<E>> &C, const HostResource &Src,
                   const HostResource &Dst, HostElements El, ReduceOp Op, ElemType T,
                   double Scale) {
    if (!C || C->path() != DataPath::Engine)
      return PreparedAllReduce(); // none: the plain launch serves
    return E::prepareAllReduce(C->Engine, Src, Dst, El, Op, T, Scale);
  }
};

/// \p P is the all_reduce that engine \p Eng sets up at capture (where it
/// has one). A concept of its own: written inline in the requires-clause of
/// a member template, clang substitutes it when ShmDriver<Eng> is
/// instantiated, and fails for an engine without one.
template <class P, class Eng>
concept PreparedAllReduceOf = requires { typename Eng::PreparedAllReduce; } &&
                              std::same_as<P, typename Eng::PreparedAllReduce>;
} // namespace detail

template <ExecutorDriver E>
struct ShmDriver : HostDriverBase<ShmDriver<E>>,
                   detail::SplitTraitOf<E>,
                   detail::PreparedTraitOf<E> {
  static_assert(std::same_as<typename E::Resource, HostResource> &&
                    std::same_as<typename E::CommStream, HostStream *>,
                "the engine is a host driver");
  // The base's types (a dependent base: named here so the body sees them).
  using Base = HostDriverBase<ShmDriver<E>>;
  using typename Base::CommStream;
  using typename Base::DataType;
  using typename Base::Elems;
  using typename Base::Resource;
  using typename Base::StreamOwner;
  using Engine = E;
  using Group = ShmGroup<E>;
  using Communicator = std::shared_ptr<Group>;
  using UniqueId = typename E::UniqueId;

  /// The backend is the engine's, to its users.
  static llvm::StringRef name() { return E::name(); }

  static llvm::Expected<UniqueId> groupId(const CommunicationId &Id) { return E::groupId(Id); }
  static llvm::Expected<Communicator> join(UniqueId Id, size_t Ranks, size_t Rank) {
    return formJoined(E::join(Id, Ranks, Rank), Id);
  }
  /// The engine's joinWatched, where it has one.
  static llvm::Expected<Communicator> joinWatched(const Communicator &Parent,
                                                  llvm::ArrayRef<int32_t> ParentRanks, UniqueId Id,
                                                  size_t Rank) requires WatchedJoinDriver<E> {
    return formJoined(E::joinWatched(Parent ? Parent->Engine : typename E::Communicator(),
                                     ParentRanks, Id, Rank),
                      Id);
  }
  static llvm::Expected<Communicator> split(const Communicator &C, int Color, int Key) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    llvm::Expected<typename E::Communicator> Child = E::split(C->Engine, Color, Key);
    if (!Child)
      return Child.takeError();
    if (!*Child)
      return Communicator();
    std::string Name = llvm::formatv("{0}.split{1}.color{2}", C->Name, ++C->Splits, Color).str();
    llvm::Expected<Communicator> G = form(std::move(*Child), Name, C->Wait.Timeout);
    return G;
  }

  // --- collectives ---------------------------------------------------------------
  static llvm::Error allReduceScaled(const Communicator &C, const Resource &Src,
                                     const Resource &Dst, Elems El, ReduceOp Op, ElemType T,
                                     double Scale, CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() == DataPath::Engine)
      return E::allReduceScaled(C->Engine, Src, Dst, El, Op, T, Scale, S);
    if (llvm::Error Err = checkReduction(view(C), false, Src, Dst, El, T, Op, Scale))
      return Err;
    TeamOp TO = op(local::OpCode::AllReduce, El, Src.Data, Dst.Data);
    TO.Head.Op = Op;
    TO.Head.Scale = Scale;
    if (C->path() == DataPath::Shm)
      return enqueue(C, S, TO);
    return enqueueAround(C, S, TO);
  }
  /// The interface's all_reduce (HostDriverBase's), beside the prepared one.
  using Base::allReduce;
  /// An all_reduce the engine set up at capture (engine path only).
  template <class P>
    requires detail::PreparedAllReduceOf<P, E>
  static llvm::Error allReduce(const P &Call, CommStream S) {
    return E::allReduce(Call, S);
  }
  static llvm::Error reduceScatterScaled(const Communicator &C, const Resource &Src,
                                         const Resource &Dst, Elems El, ReduceOp Op, ElemType T,
                                         double Scale, CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::reduceScatterScaled(C->Engine, Src, Dst, El, Op, T, Scale, S);
    if (llvm::Error Err = checkReduction(view(C), true, Src, Dst, El, T, Op, Scale))
      return Err;
    TeamOp TO = op(local::OpCode::ReduceScatter, El, Src.Data, Dst.Data);
    TO.Head.Op = Op;
    TO.Head.Scale = Scale;
    return enqueue(C, S, TO);
  }
  static llvm::Error allGather(const Communicator &C, const Resource &Src, const Resource &Dst,
                               Elems El, CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::allGather(C->Engine, Src, Dst, El, S);
    if (llvm::Error Err = checkAllGather(view(C), Src, Dst, El))
      return Err;
    return enqueue(C, S, op(local::OpCode::AllGather, El, Src.Data, Dst.Data));
  }
  static llvm::Error broadcast(const Communicator &C, const Resource *Src, const Resource &Dst,
                               Elems El, size_t Root, CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::broadcast(C->Engine, Src, Dst, El, Root, S);
    if (llvm::Error Err = checkBroadcast(view(C), Src, Dst, El, Root))
      return Err;
    bool IsRoot = Root == size_t(C->rank());
    TeamOp TO = op(local::OpCode::Broadcast, El, IsRoot ? Src->Data : nullptr, Dst.Data);
    TO.Head.Root = int64_t(Root);
    return enqueue(C, S, TO);
  }
  static llvm::Error allToAll(const Communicator &C, const Resource &Src, const Resource &Dst,
                              Elems El, size_t Ranks, CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::allToAll(C->Engine, Src, Dst, El, Ranks, S);
    if (llvm::Error Err = checkAllToAll(view(C), Src, Dst, El, Ranks))
      return Err;
    return enqueue(C, S, op(local::OpCode::AllToAll, El, Src.Data, Dst.Data));
  }
  static llvm::Error allToAllV(const Communicator &C, const Resource &Src, const Resource &Dst,
                               ElemType T, llvm::ArrayRef<uint64_t> SendCounts,
                               llvm::ArrayRef<uint64_t> RecvCounts, CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::allToAllV(C->Engine, Src, Dst, T, SendCounts, RecvCounts, S);
    if (llvm::Expected<AllToAllVTotals> Totals =
            checkAllToAllV(view(C), Src, Dst, T, SendCounts, RecvCounts);
        !Totals)
      return Totals.takeError();
    if (!S)
      return noStreamError();
    // The counts must outlive the asynchronous operation: copies.
    auto Counts = std::make_shared<std::vector<uint64_t>>(SendCounts.begin(), SendCounts.end());
    Counts->insert(Counts->end(), RecvCounts.begin(), RecvCounts.end());
    TeamOp TO = op(local::OpCode::AllToAllV, {T, 0}, Src.Data, Dst.Data);
    Group *G = C.get();
    G->Enqueued.fetch_add(1, std::memory_order_relaxed);
    S->enqueue([G, TO, Counts]() mutable -> llvm::Error {
      size_t N = Counts->size() / 2;
      TO.SendCounts = llvm::ArrayRef<uint64_t>(*Counts).take_front(N);
      TO.RecvCounts = llvm::ArrayRef<uint64_t>(*Counts).drop_front(N);
      llvm::Error Err = G->Team->collective(TO, G->Wait);
      G->Retired.fetch_add(1, std::memory_order_release);
      return Err;
    });
    return llvm::Error::success();
  }
  static llvm::Error barrier(const Communicator &C, CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::barrier(C->Engine, S);
    return enqueue(C, S, op(local::OpCode::Barrier, {ElemType::U8, 0}, nullptr, nullptr));
  }
  static llvm::Error send(const Communicator &C, const Resource &Src, Elems El, size_t Peer,
                          CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::send(C->Engine, Src, El, Peer, S);
    if (llvm::Error Err = checkPointToPoint(view(C), true, Src, El, Peer))
      return Err;
    if (!S)
      return noStreamError();
    // Not counted as pending: a send may stay in flight on a peer's stream
    // while the team's collectives run; it holds the group itself.
    const char *Data = Src.Data;
    uint64_t Bytes = El.Count * elemTypeBytes(El.Type);
    S->enqueue([C, Data, Bytes, El, Peer]() -> llvm::Error {
      return C->Team->send(uint32_t(Peer), Data, Bytes, El.Type, C->Wait);
    });
    return llvm::Error::success();
  }
  static llvm::Error recv(const Communicator &C, const Resource &Dst, Elems El, size_t Peer,
                          CommStream S) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::recv(C->Engine, Dst, El, Peer, S);
    if (llvm::Error Err = checkPointToPoint(view(C), false, Dst, El, Peer))
      return Err;
    if (!S)
      return noStreamError();
    char *Data = Dst.Data;
    uint64_t Bytes = El.Count * elemTypeBytes(El.Type);
    S->enqueue([C, Data, Bytes, El, Peer]() -> llvm::Error {
      return C->Team->recv(uint32_t(Peer), Data, Bytes, El.Type, C->Wait);
    });
    return llvm::Error::success();
  }

  /// Synchronous, on the caller's thread; needs no outstanding stream work
  /// on \p C.
  static llvm::Expected<std::vector<uint32_t>>
  allGatherWords(const Communicator &C, llvm::ArrayRef<uint32_t> Local, CommStream S = nullptr) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (C->path() != DataPath::Shm)
      return E::allGatherWords(C->Engine, Local, S);
    if (llvm::Error Err = checkNothingPending(C->Enqueued.load() - C->Retired.load()))
      return Err;
    std::vector<uint32_t> Out(Local.size() * size_t(C->size()));
    TeamOp TO = op(local::OpCode::Words, {ElemType::U32, Local.size()},
                   reinterpret_cast<const char *>(Local.data()), reinterpret_cast<char *>(Out.data()));
    if (llvm::Error Err = C->Team->collective(TO, C->Wait))
      return Err;
    return Out;
  }

  static llvm::Error health(const Communicator &C) {
    if (llvm::Error Err = checkCommunicator(C))
      return Err;
    if (llvm::Error Err = E::health(C->Engine))
      return Err;
    if (C->Team)
      if (llvm::Error Err = C->Team->health())
        return Err;
    return llvm::Error::success();
  }
  static void setTimeout(const Communicator &C, std::chrono::milliseconds T) {
    if (!C)
      return;
    C->Wait.Timeout = T;
    E::setTimeout(C->Engine, T);
    if (C->Across)
      E::setTimeout(C->Across, T);
  }

  // --- the executor's hooks ------------------------------------------------------
  /// \p C's path and why (PathChoice.h).
  static std::pair<std::string, std::string> pathOf(const Communicator &C) {
    return {dataPathName(C->path()).str(), C->Choice.Why};
  }
  /// An arena on each host for \p Bytes of this process's buffers: a
  /// collective of \p C's members (none where C takes the engine path, or,
  /// under auto, where the arena cannot be made: operands are then staged).
  static llvm::Expected<std::shared_ptr<HostArena>> shareHostMemory(const Communicator &C,
                                                                    uint64_t Bytes) {
    if (!C || C->path() == DataPath::Engine)
      return nullptr;
    auto Gather = [&](llvm::ArrayRef<uint32_t> W) {
      return E::allGatherWords(C->Engine, W, CommStream());
    };
    llvm::Expected<std::shared_ptr<SharedArena>> A =
        shareArena(C->Hosts, Bytes, C->Name, Gather,
                   std::chrono::steady_clock::now() + C->Wait.Timeout);
    // Every member got the error (the arena's last gather): under auto
    // all go on without an arena (their operands staged), and the path
    // says why; else all fail.
    if (!A && C->Hosts.Mode != Transport::Shm) {
      C->Choice.Why += "; no arena for the executor's buffers (" +
                       llvm::toString(A.takeError()) + "): operands are staged";
      return nullptr;
    }
    if (!A)
      return A.takeError();
    return std::shared_ptr<HostArena>(std::move(*A));
  }
  /// The engine's communicator under \p C (for the engine's own accessors:
  /// runtime/gloo/GlooCommContext.h).
  static const typename E::Communicator &engineOf(const Communicator &C) { return C->Engine; }

private:
  static HostGroupView view(const Communicator &C) { return {C->size(), C->rank()}; }

  static TeamOp op(local::OpCode Code, Elems El, const char *Src, char *Dst) {
    TeamOp TO;
    TO.Head.Code = Code;
    TO.Head.Elem = El.Type;
    TO.Head.Count = El.Count;
    TO.Src = Src;
    TO.Dst = Dst;
    return TO;
  }

  /// Forms the group over the engine's communicator \p Engine: where its
  /// processes are, its path, its team.
  /// The group over the engine's communicator \p C that joined \p Id.
  static llvm::Expected<Communicator> formJoined(llvm::Expected<typename E::Communicator> C,
                                                 const UniqueId &Id) {
    if (!C)
      return C.takeError();
    return form(std::move(*C), llvm::formatv("{0}", Id).str(), defaultTimeout());
  }
  static llvm::Expected<Communicator> form(typename E::Communicator Engine, std::string Name,
                                           std::chrono::milliseconds Timeout) {
    auto G = std::make_shared<Group>(std::move(Engine), std::move(Name), Timeout);
    auto Gather = [&](llvm::ArrayRef<uint32_t> W) {
      return E::allGatherWords(G->Engine, W, CommStream());
    };
    Deadline By = std::chrono::steady_clock::now() + Timeout;
    llvm::Expected<GroupHosts> H = meetHosts(G->Name, Gather);
    if (!H)
      return H.takeError();
    G->Hosts = std::move(*H);
    llvm::Expected<PathChoice> Choice = choosePath(G->Hosts, E::name());
    if (!Choice)
      return Choice.takeError();
    G->Choice = std::move(*Choice);
    if (G->path() == DataPath::Engine)
      return G;
    llvm::Expected<std::shared_ptr<ShmTeam>> Team = formTeam(G->Hosts, G->Name, Gather, By);
    if (!Team) {
      // Every member got an error (the formation's last gather): all take
      // the engine, or, where shm was asked, all fail.
      if (G->Hosts.Mode == Transport::Shm)
        return Team.takeError();
      G->Choice = {DataPath::Engine,
                   "shared memory failed here: " + llvm::toString(Team.takeError())};
      return G;
    }
    G->Team = std::move(*Team);
    if (G->path() == DataPath::Hierarchical) {
      llvm::Expected<typename E::Communicator> A = E::split(
          G->Engine, int(G->Hosts.LocalIndex), int(G->Hosts.HostOf[size_t(G->Hosts.Rank)]));
      if (!A)
        return A.takeError();
      G->Across = std::move(*A);
      G->AcrossStream = E::createStream("shm.across");
    }
    return G;
  }

  /// Runs \p TO on \p C's team from stream \p S.
  static llvm::Error enqueue(const Communicator &C, CommStream S, TeamOp TO) {
    if (!S)
      return noStreamError();
    // A plain pointer, not a second reference: the group outlives the task
    // (its destructor waits for what was enqueued).
    Group *G = C.get();
    G->Enqueued.fetch_add(1, std::memory_order_relaxed);
    S->enqueue([G, TO]() -> llvm::Error {
      llvm::Error Err = G->Team->collective(TO, G->Wait);
      G->Retired.fetch_add(1, std::memory_order_release);
      return Err;
    });
    return llvm::Error::success();
  }

  /// The hierarchical all_reduce: within the host on the team, the
  /// engine's all_reduce of each member's chunk across hosts in between
  /// (narrow floats as f32: ShmTeam::allReduceAround). avg sums on both
  /// levels and divides by the group's size at the end, before a narrow
  /// type rounds; premul_sum scales within the host and sums across.
  static llvm::Error enqueueAround(const Communicator &C, CommStream S, TeamOp TO) {
    if (!S)
      return noStreamError();
    ReduceOp Asked = TO.Head.Op;
    if (Asked == ReduceOp::Avg)
      TO.Head.Op = ReduceOp::Sum;
    ReduceOp AcrossOp =
        Asked == ReduceOp::Avg || Asked == ReduceOp::PremulSum ? ReduceOp::Sum : Asked;
    Group *G = C.get();
    G->Enqueued.fetch_add(1, std::memory_order_relaxed);
    S->enqueue([G, TO, Asked, AcrossOp]() -> llvm::Error {
      auto Across = [&](char *Chunk, ElemType T, uint64_t Count) -> llvm::Error {
        HostResource R{Chunk, Count * elemTypeBytes(T)};
        typename E::CommStream AS = E::streamOf(G->AcrossStream);
        if (llvm::Error Err = E::allReduceScaled(G->Across, R, R, {T, Count}, AcrossOp, T, 1.0, AS))
          return Err;
        if (llvm::Error Err = E::synchronize(AS))
          return Err;
        if (Asked == ReduceOp::Avg)
          local::divideInPlace(T, Chunk, Count, unsigned(G->size()));
        return llvm::Error::success();
      };
      llvm::Error Err = G->Team->allReduceAround(TO, G->Wait, Across);
      G->Retired.fetch_add(1, std::memory_order_release);
      return Err;
    });
    return llvm::Error::success();
  }
};

} // namespace collc::rt::shm

#endif
