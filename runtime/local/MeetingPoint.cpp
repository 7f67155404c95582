//===- runtime/local/MeetingPoint.cpp - Where a local group's threads meet ---===//

#include "runtime/local/MeetingPoint.h"

#include "runtime/local/MailboxFill.h"

#include "runtime/local/Kernels.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include <sched.h>

using namespace llvm;

namespace collc::rt::local {

/// CPUs this process may run on.
static int usableCpus() {
  cpu_set_t Allowed;
  if (sched_getaffinity(0, sizeof(Allowed), &Allowed) == 0)
    return CPU_COUNT(&Allowed);
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

MeetingPoint::MeetingPoint(std::string N, int S)
    : Name(std::move(N)), Size(S), Oversubscribed(S > usableCpus()), Slots(new Slot[S]),
      Channels(new Channel[size_t(S) * S]) {}

Error MeetingPoint::claim(int Rank) {
  std::lock_guard<std::mutex> L(M);
  if (Slots[Rank].Claimed)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("rank {0} of group '{1}' joined twice", Rank, Name));
  Slots[Rank].Claimed = true;
  return Error::success();
}

Error MeetingPoint::brokenError(bool InFlight) const {
  std::lock_guard<std::mutex> L(M);
  // A wait the failure interrupted reports the cause's kind ("rank 2 timed
  // out"); later operations are refused as Broken. Both blame the cause's
  // peer and quote it.
  return makeError(InFlight ? BrokenKind : ErrorKind::Broken,
                   "group '" + Name + "' is broken: " + BrokenWhy, BrokenPeer);
}

void MeetingPoint::fail(Error Why) {
  ErrorParts Cause = takeErrorParts(std::move(Why), ErrorKind::Broken);
  {
    std::lock_guard<std::mutex> L(M);
    if (!Broken.load(std::memory_order_relaxed)) {
      BrokenWhy = Cause.Text;
      BrokenKind = Cause.Kind;
      BrokenPeer = Cause.Peer;
      Broken.store(true, std::memory_order_seq_cst);
    }
  }
  wake();
}

void MeetingPoint::markDead(int Rank, const std::string &Why) {
  Slots[Rank].Dead.store(true, std::memory_order_seq_cst);
  fail(makeError(ErrorKind::PeerLost, formatv("rank {0} is gone: {1}", Rank, Why), Rank));
}

Error MeetingPoint::health(int Rank) const {
  if (broken())
    return brokenError();
  for (int R = 0; R != Size; ++R)
    if (R != Rank && Slots[R].Dead.load(std::memory_order_acquire))
      return makeError(ErrorKind::PeerLost, formatv("rank {0} of group '{1}' is gone", R, Name), R);
  return Error::success();
}

Error MeetingPoint::waitUntil(function_ref<bool()> Ready, function_ref<std::vector<int>()> Missing,
                              const WaitPolicy &W, function_ref<std::string()> What) {
  Expected<WaitOutcome> Outcome =
      waitAtDoorbell(Bell, BellScope::ThisProcess, Ready, W, Oversubscribed,
                     [&](std::chrono::steady_clock::time_point) {
                       return broken() ? brokenError(/*InFlight=*/true) : Error::success();
                     });
  if (!Outcome)
    return Outcome.takeError();
  if (*Outcome == WaitOutcome::Ready)
    return Error::success();
  std::vector<int> Late = Missing();
  int64_t Blame = Late.empty() ? -1 : Late.front();
  std::string Msg = toString(makeError(ErrorKind::Timeout,
                                       formatv("{0} of group '{1}' did not arrive at {2} within "
                                               "{3} ms",
                                               lateRanks(Late), Name, What(), W.Timeout.count()),
                                       Blame));
  // Everyone else waiting on this group learns the same cause.
  fail(makeError(ErrorKind::Timeout, Msg, Blame));
  return makeError(ErrorKind::Timeout, Msg, Blame);
}

void MeetingPoint::publish(int Rank, uint64_t Seq, const Post &P, const char *Data, uint64_t Bytes,
                           bool Wake) {
  Slot &S = Slots[Rank];
  S.P[Seq & 1] = P;
  // Every arrival fills both the post and the mailbox (MailboxFill.h).
  fillMailbox(S.Box[Seq & 1], P, Data, Bytes, Seq);
  S.Arrived.store(Seq, std::memory_order_release);
  if (Wake)
    wake();
}

Error MeetingPoint::arrive(int Rank, uint64_t Seq, const Post &P, const WaitPolicy &W) {
  if (broken())
    return brokenError();
  publish(Rank, Seq, P, nullptr, 0, /*Wake=*/true);
  auto Missing = [&] {
    std::vector<int> Late;
    for (int R = 0; R != Size; ++R)
      if (Slots[R].Arrived.load(std::memory_order_acquire) < Seq)
        Late.push_back(R);
    return Late;
  };
  auto Ready = [&] {
    for (int R = 0; R != Size; ++R)
      if (Slots[R].Arrived.load(std::memory_order_acquire) < Seq)
        return false;
    return true;
  };
  return waitUntil(Ready, Missing, W,
                   [&] { return formatv("{0} #{1}", opCodeName(P.Code), Seq).str(); });
}

Error MeetingPoint::arriveTiny(int Rank, uint64_t Seq, const Post &P, const char *Data,
                               uint64_t Bytes, const WaitPolicy &W) {
  if (broken())
    return brokenError();
  // No fence and wake-up before waiting: the fence would stall until the
  // peers' copies of our mailbox line are invalidated, which is the whole
  // latency of this path. Sleepers are woken after the wait instead: a
  // sleeper waits for us, so our wait ends as soon as the others arrive,
  // and the last rank to arrive always sees everyone at once.
  publish(Rank, Seq, P, Data, Bytes, /*Wake=*/false);
  // The mailbox line carries the flag, the header and the data together.
  auto Ready = [&] {
    for (int R = 0; R != Size; ++R)
      if (Slots[R].Box[Seq & 1].Seq.load(std::memory_order_acquire) < Seq)
        return false;
    return true;
  };
  auto Missing = [&] {
    std::vector<int> Late;
    for (int R = 0; R != Size; ++R)
      if (Slots[R].Box[Seq & 1].Seq.load(std::memory_order_acquire) < Seq)
        Late.push_back(R);
    return Late;
  };
  Error E = waitUntil(Ready, Missing, W,
                      [&] { return formatv("{0} #{1}", opCodeName(P.Code), Seq).str(); });
  wake();
  return E;
}

int MeetingPoint::firstMailboxMismatch(uint64_t Seq) const {
  const Mailbox &A = Slots[0].Box[Seq & 1];
  for (int R = 1; R != Size; ++R) {
    const Mailbox &B = Slots[R].Box[Seq & 1];
    if (A.Code != B.Code || A.Elem != B.Elem || A.Op != B.Op || A.Root != B.Root ||
        A.Count != B.Count || A.Scale != B.Scale)
      return R;
  }
  return -1;
}

Error MeetingPoint::complete(int Rank, uint64_t Seq, const WaitPolicy &W) {
  storeFence(); // streaming stores land before anyone reads them
  Slots[Rank].Done.store(Seq, std::memory_order_seq_cst);
  wake();
  auto Missing = [&] {
    std::vector<int> Late;
    for (int R = 0; R != Size; ++R)
      if (Slots[R].Done.load(std::memory_order_acquire) < Seq)
        Late.push_back(R);
    return Late;
  };
  auto Ready = [&] {
    for (int R = 0; R != Size; ++R)
      if (Slots[R].Done.load(std::memory_order_acquire) < Seq)
        return false;
    return true;
  };
  return waitUntil(Ready, Missing, W, [&] {
    return formatv("the end of {0} #{1}", opCodeName(post(Rank, Seq).Code), Seq).str();
  });
}

Error MeetingPoint::send(int From, int To, const char *Data, uint64_t Bytes, ElemType T,
                         const WaitPolicy &W) {
  if (broken())
    return brokenError();
  Channel &C = Channels[size_t(From) * Size + To];
  uint64_t Seq = ++C.SendSeq;
  C.Data = Data;
  C.Bytes = Bytes;
  C.Elem = T;
  C.Posted.store(Seq, std::memory_order_seq_cst);
  wake();
  if (Error E = waitUntil([&] { return C.Taken.load(std::memory_order_acquire) >= Seq; },
                          [&] { return std::vector<int>{To}; }, W,
                          [&] { return formatv("recv #{0} from rank {1}", Seq, From).str(); }))
    return E;
  if (C.Mismatch.load(std::memory_order_acquire))
    return makeError(ErrorKind::Mismatch,
                     formatv("rank {0} sent {1} bytes of {2} to rank {3}, which expected {4} "
                             "bytes of {5}",
                             From, Bytes, elemTypeName(T), To, C.WantedBytes,
                             elemTypeName(C.WantedElem)),
                     To);
  return Error::success();
}

Error MeetingPoint::recv(int To, int From, char *Data, uint64_t Bytes, ElemType T,
                         const WaitPolicy &W) {
  if (broken())
    return brokenError();
  Channel &C = Channels[size_t(From) * Size + To];
  uint64_t Seq = ++C.RecvSeq;
  if (Error E = waitUntil([&] { return C.Posted.load(std::memory_order_acquire) >= Seq; },
                          [&] { return std::vector<int>{From}; }, W,
                          [&] { return formatv("send #{0} to rank {1}", Seq, To).str(); }))
    return E;
  if (C.Bytes != Bytes || C.Elem != T) {
    Error E = makeError(ErrorKind::Mismatch,
                        formatv("rank {0} expected {1} bytes of {2} from rank {3}, which sent "
                                "{4} bytes of {5}",
                                To, Bytes, elemTypeName(T), From, C.Bytes, elemTypeName(C.Elem)),
                        From);
    C.WantedBytes = Bytes;
    C.WantedElem = T;
    C.Mismatch.store(true, std::memory_order_release);
    C.Taken.store(Seq, std::memory_order_seq_cst);
    wake();
    return E;
  }
  if (Bytes)
    std::memcpy(Data, C.Data, Bytes);
  C.Mismatch.store(false, std::memory_order_release);
  C.Taken.store(Seq, std::memory_order_seq_cst);
  wake();
  return Error::success();
}

} // namespace collc::rt::local
