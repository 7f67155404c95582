//===- runtime/local/LocalDriver.cpp - Ranks as threads of one process -----===//

#include "runtime/local/LocalDriver.h"

#include "runtime/local/Kernels.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

using namespace llvm;

namespace collc::rt::local {

namespace {

/// Process-wide registry: group ids by name (minted by the first asker) and
/// the shared state of each group (created by the first joiner).
struct Registry {
  std::mutex M;
  std::map<std::string, uint64_t> Ids;
  std::map<uint64_t, std::string> Names;
  std::map<uint64_t, std::weak_ptr<MeetingPoint>> Groups;
  uint64_t Next = 1;
};
Registry &registry() {
  static Registry R;
  return R;
}

std::mutex FaultMutex;
std::optional<FaultPlan> Faults;
std::atomic<bool> FaultsOn{false}; // skip the lock when no test asked for faults

std::optional<FaultPlan> faultsFor(const MeetingPoint &G) {
  if (!FaultsOn.load(std::memory_order_acquire))
    return std::nullopt;
  std::lock_guard<std::mutex> L(FaultMutex);
  if (!Faults || (!Faults->GroupName.empty() && Faults->GroupName != G.name()))
    return std::nullopt;
  return Faults;
}

Error checkComm(const LocalDriver::Communicator &C) { return checkCommunicator(C); }

/// What the argument checks (HostDriverChecks.h) need of \p C.
HostGroupView view(const LocalDriver::Communicator &C) { return {C->size(), C->rank()}; }

/// The faults planned for this rank's next operation, if any: kills and
/// delays happen here, a wrong size changes \p P.
void injectFaults(Membership &C, Post *P) {
  uint64_t Op = C.nextOp();
  std::optional<FaultPlan> F = faultsFor(C.group());
  if (!F)
    return;
  if (F->DelayRank == C.rank())
    std::this_thread::sleep_for(F->Delay);
  if (F->KillRank == C.rank() && Op >= F->KillAtOp) {
    C.Killed.store(true);
    if (!F->KillSilently)
      C.group().markDead(C.rank(), "killed by fault injection");
  }
  if (P && F->WrongSizeRank == C.rank() && Op == F->WrongSizeAtOp)
    P->Count += 1;
}

Error killedError(const Membership &C) {
  return makeError(
      ErrorKind::PeerLost,
      formatv("rank {0} of group '{1}' was killed by fault injection", C.rank(), C.group().name()),
      C.rank());
}

/// What \p P asks of every rank alike.
OpHeader headerOf(const Post &P) { return {P.Code, P.Elem, P.Op, P.Scale, P.Count, P.Root}; }

/// Everyone posted the same kind of operation with the same shape, or the
/// error every rank reports alike (all ranks check all posts).
Error validatePosts(const MeetingPoint &G, int Self, uint64_t Seq) {
  const Post &A = G.post(0, Seq);
  for (int R = 1; R != G.size(); ++R) {
    std::string What = opMismatch(headerOf(A), 0, headerOf(G.post(R, Seq)), R);
    if (!What.empty())
      return makeError(ErrorKind::Mismatch,
                       formatv("{0} in group '{1}' does not match across ranks: {2}",
                               opCodeName(A.Code), G.name(), What),
                       R == Self ? 0 : R);
  }
  if (A.Code == OpCode::AllToAllV)
    for (int From = 0; From != G.size(); ++From)
      for (int To = 0; To != G.size(); ++To)
        if (G.post(From, Seq).SendCounts[To] != G.post(To, Seq).RecvCounts[From])
          return makeError(ErrorKind::Mismatch,
                           formatv("all_to_all_v in group '{0}': rank {1} sends {2} elements to "
                                   "rank {3}, which expects {4}",
                                   G.name(), From, G.post(From, Seq).SendCounts[To], To,
                                   G.post(To, Seq).RecvCounts[From]),
                           From == Self ? To : From);
  return Error::success();
}

/// Bytes of input a rank brings (what an inline copy must hold).
uint64_t inputBytes(const Post &P, int N) {
  return shareInputBytes(P.Code, P.Count, elemTypeBytes(P.Elem), N);
}

/// Small collectives go inline: every rank copies its input into its slot,
/// a single rendezvous follows, and each rank computes its own result from
/// the copies (nobody touches a peer's buffers, so no second rendezvous).
bool isInline(const Post &P, int N) {
  static const bool Off = getenv("COLLC_NO_INLINE") != nullptr;
  return !Off && P.Code != OpCode::AllToAllV && inputBytes(P, N) <= MeetingPoint::InlineBytes;
}

/// What every rank posted for \p Seq, as rank \p R's share sees it, the
/// sources being \p Srcs (the posts' own, or copies of them).
void runShareOf(const MeetingPoint &G, int R, uint64_t Seq, const char *const *Srcs, bool Whole) {
  int N = G.size();
  const Post &Me = G.post(R, Seq);
  SmallVector<char *, 16> Dsts;
  SmallVector<const uint64_t *, 16> SendCounts;
  for (int I = 0; I != N; ++I) {
    Dsts.push_back(G.post(I, Seq).Dst);
    SendCounts.push_back(G.post(I, Seq).SendCounts);
  }
  ShareView V;
  V.Head = headerOf(Me);
  V.Ranks = N;
  V.Rank = R;
  V.Srcs = Srcs;
  V.Dsts = Dsts.data();
  V.SendCounts = SendCounts.data();
  V.RecvCounts = Me.RecvCounts;
  runShare(V, Whole);
}

/// This rank's share of the work (Shares.h). Large: reads the peers'
/// buffers and, for all_reduce, writes its chunk into every peer's output.
/// Inline: computes its own whole output from the inline copies.
void doShare(const MeetingPoint &G, int R, uint64_t Seq, bool Inline) {
  SmallVector<const char *, 16> Srcs;
  for (int I = 0; I != G.size(); ++I)
    Srcs.push_back(G.post(I, Seq).Src);
  runShareOf(G, R, Seq, Srcs.data(), /*Whole=*/Inline);
}

/// The latency path: the payload fits in the mailbox line.
bool isTiny(const Post &P, int N) {
  return P.Code != OpCode::AllToAllV && inputBytes(P, N) <= MeetingPoint::MailboxBytes;
}

Error runTiny(Membership &C, MeetingPoint &G, uint64_t Seq, const Post &P) {
  uint64_t Bytes = P.Src ? inputBytes(P, G.size()) : 0;
  if (Error E = G.arriveTiny(C.rank(), Seq, P, P.Src, Bytes, C.Wait))
    return E;
  if (G.firstMailboxMismatch(Seq) >= 0) {
    // The posts say what differs; finish together as the other paths do.
    Error Mismatch = validatePosts(G, C.rank(), Seq);
    if (!Mismatch)
      Mismatch =
          makeError(ErrorKind::Mismatch, formatv("{0} in group '{1}' does not match across ranks",
                                                 opCodeName(P.Code), G.name()));
    if (Error E = G.complete(C.rank(), Seq, C.Wait)) {
      consumeError(std::move(Mismatch));
      return E;
    }
    return Mismatch;
  }
  SmallVector<const char *, 16> Srcs;
  for (int I = 0; I != G.size(); ++I)
    Srcs.push_back(G.mailboxData(I, Seq));
  runShareOf(G, C.rank(), Seq, Srcs.data(), /*Whole=*/true);
  return Error::success();
}

/// One collective on this rank: arrive, check, work, complete.
Error runCollective(Membership &C, Post P) {
  if (C.Killed.load())
    return killedError(C);
  injectFaults(C, &P);
  if (C.Killed.load())
    return killedError(C);
  uint64_t Seq = C.nextSeq();
  MeetingPoint &G = C.group();
  if (isTiny(P, G.size()))
    return runTiny(C, G, Seq, P);
  bool Inline = isInline(P, G.size());
  if (Inline && P.Src) {
    // Peers read the copy, not our buffer (which we may reuse at once).
    char *Copy = G.inlineData(C.rank(), Seq);
    copyBytes(Copy, P.Src, inputBytes(P, G.size()), false);
    P.Src = Copy;
  }
  if (Error E = G.arrive(C.rank(), Seq, P, C.Wait))
    return E;
  if (Error Mismatch = validatePosts(G, C.rank(), Seq)) {
    // Everyone reaches the same verdict; finish the rendezvous together so
    // the group stays usable, and refuse the operation.
    if (Error E = G.complete(C.rank(), Seq, C.Wait)) {
      consumeError(std::move(Mismatch));
      return E;
    }
    return Mismatch;
  }
  doShare(G, C.rank(), Seq, Inline);
  if (Inline)
    return Error::success();
  return G.complete(C.rank(), Seq, C.Wait);
}

Error enqueue(const LocalDriver::Communicator &C, HostStream *S, Post P) {
  if (!S)
    return noStreamError();
  // A plain pointer, not a second reference: the task stays trivially
  // copyable (no atomic reference counting per operation), and the
  // membership outlives it (its destructor waits for what was enqueued).
  Membership *M = C.get();
  M->noteEnqueued();
  S->enqueue([M, P]() -> Error {
    Error E = runCollective(*M, P);
    M->noteRetired();
    return E;
  });
  return Error::success();
}

Post makePost(OpCode Code, ElemType T, uint64_t Count, const char *Src, char *Dst) {
  Post P;
  P.Code = Code;
  P.Elem = T;
  P.Count = Count;
  P.Src = Src;
  P.Dst = Dst;
  return P;
}

} // namespace

Membership::~Membership() {
  // Each enqueued operation runs within a nap of its stream's worker and
  // ends by its timeout at the latest.
  while (pending())
    std::this_thread::sleep_for(std::chrono::microseconds(50));
}

void setFaultPlan(std::optional<FaultPlan> Plan) {
  std::lock_guard<std::mutex> L(FaultMutex);
  FaultsOn.store(Plan.has_value(), std::memory_order_release);
  Faults = std::move(Plan);
}

Expected<LocalDriver::UniqueId> LocalDriver::groupId(const CommunicationId &Id) {
  if (Error E = checkGroupName(Id))
    return E;
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  auto [It, New] = R.Ids.try_emplace(Id.Name, R.Next);
  if (New) {
    R.Names[R.Next] = Id.Name;
    ++R.Next;
  }
  return It->second;
}

Expected<LocalDriver::Communicator> LocalDriver::join(UniqueId Id, size_t Ranks, size_t Rank) {
  if (Error E = checkJoin("a local", MaxRanks, Ranks, Rank))
    return E;
  Registry &R = registry();
  std::shared_ptr<MeetingPoint> G;
  {
    std::lock_guard<std::mutex> L(R.M);
    auto Name = R.Names.find(Id);
    if (Name == R.Names.end())
      return invalidArgument(formatv("unknown group id {0} (get one from groupId)", Id));
    std::weak_ptr<MeetingPoint> &Slot = R.Groups[Id];
    G = Slot.lock();
    if (!G) {
      G = std::make_shared<MeetingPoint>(Name->second, int(Ranks));
      Slot = G;
    } else if (size_t(G->size()) != Ranks) {
      return invalidArgument(formatv("group '{0}' has {1} ranks; rank {2} joined it with {3}",
                                     G->name(), G->size(), Rank, Ranks));
    }
  }
  if (Error E = G->claim(int(Rank)))
    return E;
  return std::make_shared<Membership>(std::move(G), int(Rank));
}

Error LocalDriver::allReduceScaled(const Communicator &C, const Resource &Src, const Resource &Dst,
                                   Elems E, ReduceOp Op, ElemType T, double Scale, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkReduction(view(C), /*Scatter=*/false, Src, Dst, E, T, Op, Scale))
    return Err;
  Post P = makePost(OpCode::AllReduce, E.Type, E.Count, Src.Data, Dst.Data);
  P.Op = Op;
  P.Scale = Scale;
  return enqueue(C, S, P);
}

Error LocalDriver::allGather(const Communicator &C, const Resource &Src, const Resource &Dst,
                             Elems E, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkAllGather(view(C), Src, Dst, E))
    return Err;
  return enqueue(C, S, makePost(OpCode::AllGather, E.Type, E.Count, Src.Data, Dst.Data));
}

Error LocalDriver::reduceScatterScaled(const Communicator &C, const Resource &Src,
                                       const Resource &Dst, Elems E, ReduceOp Op, ElemType T,
                                       double Scale, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkReduction(view(C), /*Scatter=*/true, Src, Dst, E, T, Op, Scale))
    return Err;
  Post P = makePost(OpCode::ReduceScatter, E.Type, E.Count, Src.Data, Dst.Data);
  P.Op = Op;
  P.Scale = Scale;
  return enqueue(C, S, P);
}

Error LocalDriver::broadcast(const Communicator &C, const Resource *Src, const Resource &Dst,
                             Elems E, size_t Root, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkBroadcast(view(C), Src, Dst, E, Root))
    return Err;
  bool IsRoot = Root == size_t(C->rank());
  Post P = makePost(OpCode::Broadcast, E.Type, E.Count, IsRoot ? Src->Data : nullptr, Dst.Data);
  P.Root = int64_t(Root);
  return enqueue(C, S, P);
}

Error LocalDriver::allToAll(const Communicator &C, const Resource &Src, const Resource &Dst,
                            Elems E, size_t Ranks, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkAllToAll(view(C), Src, Dst, E, Ranks))
    return Err;
  return enqueue(C, S, makePost(OpCode::AllToAll, E.Type, E.Count, Src.Data, Dst.Data));
}

Error LocalDriver::allToAllV(const Communicator &C, const Resource &Src, const Resource &Dst,
                             ElemType T, ArrayRef<uint64_t> SendCounts,
                             ArrayRef<uint64_t> RecvCounts, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Expected<AllToAllVTotals> Totals = checkAllToAllV(view(C), Src, Dst, T, SendCounts, RecvCounts);
      !Totals)
    return Totals.takeError();
  // The counts must outlive the asynchronous operation: keep copies.
  auto Counts = std::make_shared<std::vector<uint64_t>>(SendCounts.begin(), SendCounts.end());
  Counts->insert(Counts->end(), RecvCounts.begin(), RecvCounts.end());
  Post P = makePost(OpCode::AllToAllV, T, 0, Src.Data, Dst.Data);
  if (!S)
    return noStreamError();
  C->noteEnqueued();
  S->enqueue([C, P, Counts]() mutable -> Error {
    P.SendCounts = Counts->data();
    P.RecvCounts = Counts->data() + C->size();
    Error E = runCollective(*C, P);
    C->noteRetired();
    return E;
  });
  return Error::success();
}

Error LocalDriver::barrier(const Communicator &C, CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  return enqueue(C, S, makePost(OpCode::Barrier, ElemType::U8, 0, nullptr, nullptr));
}

Error LocalDriver::send(const Communicator &C, const Resource &Src, Elems E, size_t Peer,
                        CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkPointToPoint(view(C), /*Send=*/true, Src, E, Peer))
    return Err;
  uint64_t Bytes = E.Count * elemTypeBytes(E.Type);
  if (!S)
    return noStreamError();
  // Not counted as pending (Membership::pending): a send uses its channel,
  // not the rendezvous sequence of collectives, so it may stay in flight on
  // a peer's stream while a collective runs on the caller's thread; and it
  // holds the membership alive itself.
  const char *Data = Src.Data;
  S->enqueue([C, Data, Bytes, E, Peer]() -> Error {
    if (!C->Killed.load())
      injectFaults(*C, nullptr);
    return C->Killed.load()
               ? killedError(*C)
               : C->group().send(C->rank(), int(Peer), Data, Bytes, E.Type, C->Wait);
  });
  return Error::success();
}

Error LocalDriver::recv(const Communicator &C, const Resource &Dst, Elems E, size_t Peer,
                        CommStream S) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkPointToPoint(view(C), /*Send=*/false, Dst, E, Peer))
    return Err;
  uint64_t Bytes = E.Count * elemTypeBytes(E.Type);
  if (!S)
    return noStreamError();
  // Not counted as pending, as send.
  char *Data = Dst.Data;
  S->enqueue([C, Data, Bytes, E, Peer]() -> Error {
    if (!C->Killed.load())
      injectFaults(*C, nullptr);
    return C->Killed.load()
               ? killedError(*C)
               : C->group().recv(C->rank(), int(Peer), Data, Bytes, E.Type, C->Wait);
  });
  return Error::success();
}

Expected<std::vector<uint32_t>> LocalDriver::allGatherWords(const Communicator &C,
                                                            ArrayRef<uint32_t> Local, CommStream) {
  if (Error Err = checkComm(C))
    return Err;
  if (Error Err = checkNothingPending(C->pending()))
    return Err;
  std::vector<uint32_t> Out(Local.size() * C->size());
  Post P =
      makePost(OpCode::Words, ElemType::U32, Local.size(),
               reinterpret_cast<const char *>(Local.data()), reinterpret_cast<char *>(Out.data()));
  if (Error E = runCollective(*C, P))
    return E;
  return Out;
}

Expected<LocalDriver::Communicator> LocalDriver::split(const Communicator &C, int Color, int Key) {
  if (Error Err = checkComm(C))
    return Err;
  uint64_t Epoch = C->lastSeq() + 1;
  uint32_t Mine[2] = {uint32_t(Color), uint32_t(Key)};
  Expected<std::vector<uint32_t>> All = allGatherWords(C, Mine);
  if (!All)
    return All.takeError();
  if (Color < 0)
    return Communicator();
  // Members of my color, ordered by key then parent rank.
  std::vector<std::pair<int, int>> Members;
  for (int R = 0; R != C->size(); ++R)
    if (int32_t((*All)[2 * R]) == Color)
      Members.push_back({int32_t((*All)[2 * R + 1]), R});
  llvm::stable_sort(Members);
  int NewRank = 0;
  for (size_t I = 0; I != Members.size(); ++I)
    if (Members[I].second == C->rank())
      NewRank = I;
  // Every member derives the same name from the parent and this split.
  Expected<UniqueId> Id =
      groupId({formatv("{0}.split{1}.color{2}", C->group().name(), Epoch, Color).str()});
  if (!Id)
    return Id.takeError();
  Expected<Communicator> Child = join(*Id, Members.size(), NewRank);
  if (Child)
    (*Child)->Wait = C->Wait;
  return Child;
}

Error LocalDriver::health(const Communicator &C) {
  if (Error Err = checkComm(C))
    return Err;
  if (C->Killed.load())
    return killedError(*C);
  return C->group().health(C->rank());
}

void LocalDriver::setTimeout(const Communicator &C, std::chrono::milliseconds T) {
  if (C)
    C->Wait.Timeout = T;
}

static_assert(CollectiveDriver<LocalDriver>, "the local driver implements the driver interface");

} // namespace collc::rt::local
