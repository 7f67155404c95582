//===- runtime/mpi/MpiGroup.cpp - One rank's membership of an MPI communicator -===//

#include "runtime/mpi/MpiGroup.h"

#include "runtime/exec/HostStream.h"
#include "runtime/mpi/ArrivalBoard.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/xxhash.h"

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
  ArrivalBoard *B = arrivalBoard();
  // A stable key (not a pointer): every member names the group alike.
  G->Key = B ? B->keyFor(G->Name) : xxHash64(G->Name) | 1;
  G->Entry = B ? B->claim(G->Key) : -1;
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
  G->OnBoard = B && G->Entry >= 0 && llvm::all_of(G->WorldRanks, [&](int W) {
                 return B->readsDirectly(W);
               });
  return G;
}

MpiGroup::~MpiGroup() {
  // Each enqueued operation ends by its timeout at the latest.
  while (pending())
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (ArrivalBoard *B = arrivalBoard())
    B->release(Entry);
  int Finalized = 0;
  MPI_Finalized(&Finalized);
  if (!Finalized && !Broken.load())
    MPI_Comm_free(&Comm);
}

uint64_t MpiGroup::arrive() {
  uint64_t Next = Seq.load(std::memory_order_relaxed) + 1;
  Seq.store(Next, std::memory_order_relaxed);
  if (ArrivalBoard *B = arrivalBoard())
    B->publish(Key, Entry, Next);
  return Next;
}

Error MpiGroup::testArrivals(StringRef What, uint64_t Want,
                             std::chrono::steady_clock::time_point Deadline, bool &Done) {
  ArrivalBoard *B = arrivalBoard();
  Done = true;
  for (int R = 0; R != Size && Done; ++R)
    if (R != Rank) {
      std::optional<uint64_t> At = B->directSeq(WorldRanks[size_t(R)], Key);
      Done = At && *At >= Want;
    }
  if (Done || std::chrono::steady_clock::now() <= Deadline)
    return Error::success();
  return timedOut(What, -1, Want);
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
  std::string Text = Late.empty() ? "every rank arrived; MPI did not complete it"
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
  return makeError(FailKind, FailText, FailPeer);
}

void MpiGroup::keep(std::shared_ptr<void> Scratch) {
  std::lock_guard<std::mutex> L(M);
  Kept.push_back(std::move(Scratch));
}

} // namespace collc::rt::mpi
