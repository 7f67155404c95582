//===- runtime/mpi/MpiGroup.cpp - One rank's membership of an MPI communicator -===//

#include "runtime/mpi/MpiGroup.h"

#include "runtime/exec/HostStream.h"
#include "runtime/mpi/AbandonedMemory.h"
#include "runtime/mpi/ArrivalBoard.h"
#include "runtime/mpi/EagerLimit.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

#include <array>
#include <thread>

using namespace llvm;

namespace collc::rt::mpi {

Error mpiError(int Code, StringRef What, StringRef Group) {
  char Text[MPI_MAX_ERROR_STRING] = {0};
  int Len = 0;
  MPI_Error_string(Code, Text, &Len);
  return makeError(ErrorKind::Backend,
                   formatv("{0} in group '{1}' failed: {2}", What, Group, StringRef(Text, Len)));
}

Expected<std::shared_ptr<MpiGroup>> MpiGroup::adopt(MPI_Comm Comm, std::string Name,
                                                   std::chrono::milliseconds Timeout) {
  std::shared_ptr<MpiGroup> G(new MpiGroup(Comm, std::move(Name)));
  G->setTimeout(Timeout);
  // Errors come back as codes, never as MPI's abort.
  MPI_Comm_set_errhandler(Comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(Comm, &G->Rank);
  MPI_Comm_size(Comm, &G->Size);
  MPI_Group Mine = MPI_GROUP_NULL, World = MPI_GROUP_NULL;
  MPI_Comm_group(Comm, &Mine);
  MPI_Comm_group(MPI_COMM_WORLD, &World);
  std::vector<int> Local(G->Size);
  for (int R = 0; R != G->Size; ++R)
    Local[R] = R;
  G->WorldRanks.assign(G->Size, MPI_UNDEFINED);
  MPI_Group_translate_ranks(Mine, G->Size, Local.data(), World, G->WorldRanks.data());
  MPI_Group_free(&Mine);
  MPI_Group_free(&World);
  if (Error E = G->joinBoard())
    return E;
  return G;
}

Error MpiGroup::joinBoard() {
  // A stable key (not a pointer) when there is no board: diagnostics only.
  Key = xxHash64(Name) | 1;
  Board = arrivalBoard();
  if (!Board)
    return Error::success();
  // What the members agree on: the highest ordinal any of them would give
  // the name, whether any lacks a free entry (1), and the smallest eager
  // payload (as UINT64_MAX less it; 0 where a member is on another host).
  Entry = Board->reserve();
  auto DropEntry = [&] {
    Board->release(Entry);
    Entry = -1;
  };
  bool OneHost = llvm::all_of(WorldRanks, [&](int W) { return Board->readsDirectly(W); });
  // Mine, then All; on the heap: a request given up may still use them.
  auto Words = std::make_shared<std::array<uint64_t, 6>>();
  uint64_t *Mine = Words->data(), *All = Words->data() + 3;
  Mine[0] = Board->nextOrdinal(Name);
  Mine[1] = Entry < 0 ? 1u : 0u;
  Mine[2] = UINT64_MAX - (OneHost ? sharedMemoryEagerPayload() : 0);
  MPI_Request Req = MPI_REQUEST_NULL;
  if (int Rc = MPI_Iallreduce(Mine, All, 3, MPI_UINT64_T, MPI_MAX, Comm, &Req); Rc != MPI_SUCCESS) {
    DropEntry();
    return breakWith(mpiError(Rc, "agreeing on the arrival board's key", Name));
  }
  if (Error E = wait(Req, "agreeing on the arrival board's key", -1, 0)) {
    keepForAbandonedRequest(std::move(Words));
    DropEntry();
    return E;
  }
  Key = Board->settle(Name, All[0]);
  EagerPayload = UINT64_MAX - All[2];
  if (All[1]) {
    DropEntry();
    return Error::success();
  }
  Board->assign(Entry, Key);
  OnBoard = OneHost;
  return Error::success();
}

MpiGroup::~MpiGroup() {
  // Each enqueued operation ends by its timeout at the latest.
  while (pending())
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  // Only on the board it was taken from (a later session has another).
  if (Board && Board == arrivalBoard())
    Board->release(Entry);
  int Finalized = 0;
  MPI_Finalized(&Finalized);
  if (!Finalized && !Broken.load())
    MPI_Comm_free(&Comm);
}

uint64_t MpiGroup::arrive(bool Gated) {
  uint64_t Next = Seq.load(std::memory_order_relaxed) + 1;
  Seq.store(Next, std::memory_order_relaxed);
  if (Board && Board == arrivalBoard())
    Board->publish(Key, Entry, Next, Gated);
  return Next;
}

Error MpiGroup::testArrivals(StringRef What, uint64_t Want,
                             std::chrono::steady_clock::time_point Deadline, bool &Done) {
  int Root = WorldRanks[0];
  std::optional<ArrivalBoard::Verdict> V = Board->verdict(Root, Key, Want);
  if (!V) {
    bool All = true;
    for (int R = 0; R != Size && All; ++R)
      if (R != Rank) {
        std::optional<ArrivalBoard::Arrival> At = Board->directArrival(WorldRanks[size_t(R)], Key);
        All = At && At->Seq >= Want;
        if (At && At->Seq == Want && At->Gated != Want)
          return ungatedMember(What, Want, R, Root);
      }
    if (!All && std::chrono::steady_clock::now() <= Deadline) {
      Done = false;
      return Error::success();
    }
    // Every member here, or this one gives up: unless another decided first.
    V = Board->decide(Root, Key, Want, {All, Rank});
  }
  Done = V && V->Passed;
  if (Done)
    return Error::success();
  if (!V || V->By == Rank)
    return timedOut(What, -1, Want);
  int64_t FirstLate = -1;
  std::string Who = lateRanks(Want, FirstLate);
  return breakWith(makeError(
      ErrorKind::Timeout,
      formatv("rank {0}: {1} #{2} in group '{3}' was given up by rank {4}, which waited "
              "{5} ms for the others; {6}",
              Rank, What, Want, Name, V->By, timeout().count(), Who),
      FirstLate >= 0 ? FirstLate : V->By));
}

Error MpiGroup::ungatedMember(StringRef What, uint64_t Want, int Member, int Root) {
  // The gated members that have not passed yet give up too: none enters
  // the blocking call.
  Board->decide(Root, Key, Want, {false, Rank});
  return breakWith(makeError(
      ErrorKind::InvalidArgument,
      formatv("rank {0}: {1} #{2} in group '{3}': rank {4} called it without the gate before "
              "MPI's blocking call, so their calls cannot match (MPI matches no blocking "
              "collective with a nonblocking one); the ranks differ in passing MPI's in place "
              "(one's input and output are the same memory, the other's are not), which MPI asks "
              "of all members or none",
              Rank, What, Want, Name, Member),
      Member));
}

std::string MpiGroup::lateRanks(uint64_t Want, int64_t &FirstLate) {
  ArrivalBoard *B = arrivalBoard();
  if (!B)
    return "no arrival board (no MpiSession) to say who is missing";
  // Bounded too: on many hosts a read may need the target's progress.
  auto Slots = B->read(WorldRanks, std::min(timeout(), std::chrono::milliseconds(2000)));
  std::string Late, Unknown;
  for (int R = 0; R != Size; ++R) {
    if (R == Rank)
      continue;
    if (!Slots[R]) {
      Unknown += formatv("{0}{1}", Unknown.empty() ? "" : ", ", R).str();
      continue;
    }
    const ArrivalBoard::Record &Rec = *Slots[R];
    // Its entry for this group if it has one; else its last collective.
    std::optional<uint64_t> Here = Rec.seqOf(Key);
    if (!Here && Rec.Last.Group == Key)
      Here = Rec.Last.Seq;
    if (Here && *Here >= Want)
      continue;
    if (FirstLate < 0)
      FirstLate = R;
    std::string Where = Here                  ? formatv("at #{0}", *Here).str()
                        : Rec.Last.Group == 0 ? std::string("in no collective yet")
                                              : formatv("last in #{0} of another group",
                                                        Rec.Last.Seq)
                                                    .str();
    Late += formatv("{0}rank {1} ({2})", Late.empty() ? "" : ", ", R, Where).str();
  }
  std::string Text = Late.empty() ? "every rank arrived; MPI did not complete it (a member "
                                    "stalled, or the members' calls differ: in place on some "
                                    "and not others)"
                                  : "not arrived: " + Late;
  if (!Unknown.empty())
    Text += "; could not read the board of rank(s) " + Unknown;
  return Text;
}

Error MpiGroup::wait(MPI_Request &Req, StringRef What, int64_t Peer, uint64_t Want,
                     MPI_Status *Status) {
  auto Deadline = std::chrono::steady_clock::now() + timeout();
  for (unsigned Polls = 0;; ++Polls) {
    bool Done = false;
    if (Error E = test(Req, What, Peer, Want, Deadline, Done, Status))
      return E;
    if (Done)
      return Error::success();
    HostStream::pauseAfterPoll(Polls);
  }
}

Error MpiGroup::test(MPI_Request &Req, StringRef What, int64_t Peer, uint64_t Want,
                     std::chrono::steady_clock::time_point Deadline, bool &Done,
                     MPI_Status *Status) {
  int Flag = 0;
  if (int Rc = MPI_Test(&Req, &Flag, Status); Rc != MPI_SUCCESS)
    return breakWith(mpiError(Rc, What, Name));
  Done = Flag;
  if (Done || std::chrono::steady_clock::now() <= Deadline)
    return Error::success();
  return timedOut(What, Peer, Want);
}

Error MpiGroup::timedOut(StringRef What, int64_t Peer, uint64_t Want) {
  std::chrono::milliseconds Limit = timeout();
  if (Peer >= 0)
    return breakWith(makeError(ErrorKind::Timeout,
                               formatv("rank {0} did not arrive at {1} with rank {2} in group "
                                       "'{3}' within {4} ms",
                                       Peer, What, Rank, Name, Limit.count()),
                               Peer));
  int64_t FirstLate = -1;
  std::string Who = lateRanks(Want, FirstLate);
  return breakWith(makeError(ErrorKind::Timeout,
                             formatv("rank {0}: {1} #{2} in group '{3}' did not complete within "
                                     "{4} ms; {5}",
                                     Rank, What, Want, Name, Limit.count(), Who),
                             FirstLate));
}

Error MpiGroup::check() const {
  if (!Broken.load(std::memory_order_acquire))
    return Error::success();
  std::lock_guard<std::mutex> L(M);
  return makeError(ErrorKind::Broken,
                   formatv("group '{0}' is broken by an earlier failure: {1}", Name, FailText),
                   FailPeer);
}

Error MpiGroup::breakWith(Error E) {
  std::lock_guard<std::mutex> L(M);
  if (Broken.load())
    return E;
  handleAllErrors(
      std::move(E),
      [&](const RuntimeError &R) {
        FailKind = R.kind();
        FailText = R.text();
        FailPeer = R.peer();
      },
      [&](const ErrorInfoBase &B) { FailText = B.message(); });
  Broken.store(true, std::memory_order_release);
  // This rank's calls no longer pair with its peers': MPI's teardown waits
  // for them only as long as this group did (AbandonedMemory.h).
  noteMpiWait(timeout());
  return makeError(FailKind, FailText, FailPeer);
}

} // namespace collc::rt::mpi
