//===- runtime/exec/FlightRecord.cpp - A rank's last comm events -----------===//

#include "runtime/exec/FlightRecord.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace llvm;

namespace collc::rt {

StringRef commStateName(CommState S) {
  switch (S) {
  case CommState::Issued:
    return "issued";
  case CommState::Started:
    return "started";
  case CommState::Completed:
    return "completed";
  case CommState::Failed:
    return "failed";
  }
  llvm_unreachable("bad comm state");
}

std::optional<CommState> parseCommState(StringRef Name) {
  for (CommState S : {CommState::Issued, CommState::Started, CommState::Completed,
                      CommState::Failed})
    if (commStateName(S) == Name)
      return S;
  return std::nullopt;
}

StringRef rankActivityName(RankActivity A) {
  switch (A) {
  case RankActivity::Idle:
    return "idle";
  case RankActivity::Compute:
    return "compute";
  case RankActivity::Launch:
    return "launch";
  case RankActivity::Wait:
    return "wait";
  }
  llvm_unreachable("bad activity");
}

std::optional<RankActivity> parseRankActivity(StringRef Name) {
  for (RankActivity A :
       {RankActivity::Idle, RankActivity::Compute, RankActivity::Launch, RankActivity::Wait})
    if (rankActivityName(A) == Name)
      return A;
  return std::nullopt;
}

/// One event. Every field is an atomic read and written relaxed (plain moves
/// on x86); Seq and What order them (the header comment).
struct FlightRecorder::Slot {
  /// The event's number; NoEvent while the slot is refilled.
  std::atomic<uint64_t> Seq{NoEvent};
  /// Replay in bits 32-63, step in 0-31.
  std::atomic<uint64_t> Where{0};
  /// Comm in bits 32-63, ErrorKind in 8-15, CommState in 0-7.
  std::atomic<uint64_t> What{0};
  std::atomic<int64_t> Peer{-1};
  std::atomic<int64_t> Issued{0}, Started{0}, Ended{0};
  /// Split sizes kept, and bit 31 when the row was longer.
  std::atomic<uint32_t> SplitCount{0};
  std::atomic<int64_t> Splits[MaxSplits] = {};

  static constexpr uint64_t NoEvent = ~uint64_t(0);
};

static constexpr uint32_t SplitsTruncatedBit = 1u << 31;

static uint64_t whatWord(uint32_t Comm, CommState State, ErrorKind Kind = ErrorKind::Backend) {
  return uint64_t(Comm) << 32 | uint64_t(Kind) << 8 | uint64_t(State);
}

FlightRecorder::FlightRecorder(const plan::Plan &P, int64_t Rank, StringRef Backend,
                               RecordOptions O)
    : P(P), Rank(Rank), Backend(Backend.str()), Opts(std::move(O)) {
  uint32_t Capacity = std::clamp<uint32_t>(Opts.Capacity, 16, 1u << 20);
  Capacity = uint32_t(NextPowerOf2(Capacity - 1));
  Opts.Capacity = Capacity;
  if (!Opts.On)
    return;
  Clock.emplace();
  Mask = Capacity - 1;
  // Allocated once, here: the hot path writes in place.
  Slots = std::make_unique<Slot[]>(Capacity);
  LastOf.assign(P.Comms.size(), Slot::NoEvent);
}

FlightRecorder::~FlightRecorder() = default;

FlightRecorder::Slot *FlightRecorder::slotOf(uint32_t Comm) {
  if (!Opts.On || Comm >= LastOf.size() || LastOf[Comm] == Slot::NoEvent)
    return nullptr;
  uint64_t N = LastOf[Comm];
  Slot &S = Slots[N & Mask];
  // The ring moved past it: that event is gone.
  return S.Seq.load(std::memory_order_relaxed) == N ? &S : nullptr;
}

void FlightRecorder::issued(uint32_t Step, uint32_t Comm, bool Waiting) {
  if (!Opts.On || Comm >= LastOf.size())
    return;
  uint64_t N = NextSeq++;
  int64_t Now = coarseNowNs();
  Slot &S = Slots[N & Mask];
  S.Seq.store(Slot::NoEvent, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  S.Where.store(Replay << 32 | Step, std::memory_order_relaxed);
  S.Issued.store(Now, std::memory_order_relaxed);
  S.Started.store(Waiting ? Now : 0, std::memory_order_relaxed);
  S.Ended.store(0, std::memory_order_relaxed);
  S.SplitCount.store(0, std::memory_order_relaxed);
  S.What.store(whatWord(Comm, Waiting ? CommState::Started : CommState::Issued),
               std::memory_order_relaxed);
  S.Seq.store(N, std::memory_order_release);
  LastOf[Comm] = N;
  Next.store(N + 1, std::memory_order_release);
  setPosition(Step, Waiting ? RankActivity::Wait : RankActivity::Launch);
}

void FlightRecorder::setState(Slot &S, CommState State, std::atomic<int64_t> &Time) {
  uint64_t What = S.What.load(std::memory_order_relaxed);
  Time.store(coarseNowNs(), std::memory_order_relaxed);
  S.What.store((What & ~uint64_t(0xffff)) | uint64_t(State), std::memory_order_release);
}

void FlightRecorder::started(uint32_t Step, uint32_t Comm) {
  if (!Opts.On)
    return;
  setPosition(Step, RankActivity::Wait);
  Slot *S = slotOf(Comm);
  if (S && CommState(S->What.load(std::memory_order_relaxed) & 0xff) == CommState::Issued)
    setState(*S, CommState::Started, S->Started);
}

void FlightRecorder::completed(uint32_t Comm) {
  if (Slot *S = slotOf(Comm))
    setState(*S, CommState::Completed, S->Ended);
}

void FlightRecorder::failed(uint32_t Comm, ErrorKind Kind, int64_t Peer) {
  if (Slot *S = slotOf(Comm)) {
    S->Peer.store(Peer, std::memory_order_relaxed);
    S->Ended.store(coarseNowNs(), std::memory_order_relaxed);
    uint64_t What = S->What.load(std::memory_order_relaxed);
    S->What.store(whatWord(uint32_t(What >> 32), CommState::Failed, Kind),
                  std::memory_order_release);
  }
}

void FlightRecorder::splitRow(uint32_t Comm, ArrayRef<int64_t> Row) {
  Slot *S = slotOf(Comm);
  if (!S)
    return;
  size_t Kept = std::min<size_t>(Row.size(), MaxSplits);
  for (size_t I = 0; I != Kept; ++I)
    S->Splits[I].store(Row[I], std::memory_order_relaxed);
  S->SplitCount.store(uint32_t(Kept) | (Row.size() > Kept ? SplitsTruncatedBit : 0),
                      std::memory_order_release);
}

void FlightRecorder::completedAllIssued() {
  if (!Opts.On)
    return;
  for (uint32_t C = 0; C != LastOf.size(); ++C)
    if (Slot *S = slotOf(C)) {
      CommState St = CommState(S->What.load(std::memory_order_relaxed) & 0xff);
      if ((S->Where.load(std::memory_order_relaxed) >> 32) == Replay &&
          (St == CommState::Issued || St == CommState::Started))
        completed(C);
    }
}

void FlightRecorder::noteFailure(Failure F) {
  std::lock_guard<std::mutex> L(FailureLock);
  if (!Fail)
    Fail = std::move(F);
}

std::optional<FlightRecorder::Failure> FlightRecorder::failure() const {
  std::lock_guard<std::mutex> L(FailureLock);
  return Fail;
}

FlightRecorder::Snapshot FlightRecorder::snapshot() const {
  Snapshot Out;
  Out.Capacity = Opts.Capacity;
  Out.Fail = failure();
  uint64_t End = Next.load(std::memory_order_acquire);
  Out.Recorded = End;
  if (Opts.On) {
    uint64_t Begin = End > Opts.Capacity ? End - Opts.Capacity : 0;
    for (uint64_t N = Begin; N != End; ++N) {
      const Slot &S = Slots[N & Mask];
      // A slot refilled while read is read again; one the writer has since
      // given a newer event holds that event now, and is left for its own
      // turn (or dropped: it is past End).
      for (int Try = 0; Try != 64; ++Try) {
        uint64_t Seq = S.Seq.load(std::memory_order_acquire);
        if (Seq == Slot::NoEvent)
          continue;
        Event E;
        E.Seq = Seq;
        uint64_t What = S.What.load(std::memory_order_acquire);
        E.State = CommState(What & 0xff);
        E.Error = ErrorKind((What >> 8) & 0xff);
        E.Comm = uint32_t(What >> 32);
        uint64_t Where = S.Where.load(std::memory_order_relaxed);
        E.Replay = Where >> 32;
        E.Step = uint32_t(Where);
        E.Peer = S.Peer.load(std::memory_order_relaxed);
        E.IssuedNs = S.Issued.load(std::memory_order_relaxed);
        E.StartedNs = S.Started.load(std::memory_order_relaxed);
        E.EndedNs = S.Ended.load(std::memory_order_relaxed);
        uint32_t Count = S.SplitCount.load(std::memory_order_acquire);
        E.SplitsTruncated = Count & SplitsTruncatedBit;
        Count = std::min<uint32_t>(Count & ~SplitsTruncatedBit, MaxSplits);
        for (uint32_t I = 0; I != Count; ++I)
          E.Splits.push_back(S.Splits[I].load(std::memory_order_relaxed));
        std::atomic_thread_fence(std::memory_order_acquire);
        if (S.Seq.load(std::memory_order_relaxed) != Seq)
          continue;
        if (Seq == N)
          Out.Events.push_back(std::move(E));
        break;
      }
    }
  }
  // After the events: the replay and the position are then at least as
  // new as any event's.
  uint64_t Pos = Position.load(std::memory_order_relaxed);
  Out.Position = RankActivity(Pos & 0xff);
  Out.PositionStep = uint32_t(Pos >> 8);
  Out.Replays = Replays.load(std::memory_order_relaxed);
  Out.TakenNs = unixNowNs();
  return Out;
}

} // namespace collc::rt
