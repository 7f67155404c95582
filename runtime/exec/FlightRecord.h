//===- runtime/exec/FlightRecord.h - A rank's last comm events, in plan terms -*- C++ -*-===//
//
// Every executor keeps a flight record: a ring of this rank's last comm
// events, each in plan terms (the replay, the plan step, the comm, whose
// op, group, program line, dtype and size the plan gives), with its state
// (issued, started, completed, failed) and when each happened. When a step
// hangs or a rank dies, the records of the ranks, dumped
// (FlightRecordDump.h), tell where each one was; `collc diagnose`
// (runtime/diagnose/) reads them against the plan.
//
// It is on by default, so the hot path is a few stores: a slot of fixed
// size in a ring allocated once, the time a load (CoarseClock.h), nothing
// allocated, no lock. One thread writes (the one that replays); a dump may
// read from another (SIGUSR1: RecordSignal.h). A new event refills a slot
// under a seqlock whose version is the event's number (none while it is
// refilled): a reader keeps a slot only when it read the same number
// before and after. A state change of an event (started, completed,
// failed) stores its time and then its state word, which a reader loads
// first: a state it sees comes with its time. A state change finds the
// comm's slot by the comm's last event number, unless the ring has moved
// past it.
//
// Events are numbered from 0 (Recorded counts them all); the ring keeps
// the last Capacity of them, a power of two.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_FLIGHTRECORD_H
#define COLLC_RUNTIME_EXEC_FLIGHTRECORD_H

#include "plan/Plan.h"
#include "runtime/exec/CoarseClock.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace collc::rt {

/// The name and version of a dump's format (FlightRecordDump.h): the reader
/// (runtime/diagnose/) refuses any other.
constexpr llvm::StringLiteral FlightRecordFormat = "collc-flight-record";
constexpr int FlightRecordVersion = 1;

/// Where a recorded comm stands, in the order it moves.
enum class CommState : uint8_t {
  Issued,    ///< launched on this rank's comm stream
  Started,   ///< this rank waits for it (a host backend), or its start was seen
  Completed, ///< done on this rank
  Failed,    ///< ended in an error on this rank
};
llvm::StringRef commStateName(CommState S);
std::optional<CommState> parseCommState(llvm::StringRef Name);

/// What an executor does with its record (ExecutorOptions::Record).
struct RecordOptions {
  /// Keep the ring (cheap enough to stay on: `collc bench` measures it).
  bool On = true;
  /// Events kept, rounded up to a power of two (at least 16, at most 1 << 20).
  uint32_t Capacity = 1024;
  /// Where dumps go (on a failure, a timeout, SIGUSR1, and at the
  /// executor's end with DumpAtExit); empty: nowhere unless asked.
  std::string Dir;
  bool DumpAtExit = false;
};

/// What a rank is doing, for the dump: its position.
enum class RankActivity : uint8_t { Idle, Compute, Launch, Wait };
llvm::StringRef rankActivityName(RankActivity A);
std::optional<RankActivity> parseRankActivity(llvm::StringRef Name);

class FlightRecorder {
public:
  /// The most split sizes an event keeps (this rank's row of an
  /// all_to_all_v's matrix); a larger group keeps the first ones and says so.
  static constexpr uint32_t MaxSplits = 16;

  /// Rank \p Rank of \p P on \p Backend; \p P must outlive the recorder.
  FlightRecorder(const plan::Plan &P, int64_t Rank, llvm::StringRef Backend, RecordOptions O);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder &) = delete;
  FlightRecorder &operator=(const FlightRecorder &) = delete;

  bool on() const { return Opts.On; }
  const RecordOptions &options() const { return Opts; }
  /// Where dumps go from now on (not while one is written: the executor
  /// withdraws the record from SIGUSR1 first).
  void setDumpPlace(std::string Dir, bool AtExit) {
    Opts.Dir = std::move(Dir);
    Opts.DumpAtExit = AtExit;
  }
  const plan::Plan &plan() const { return P; }
  int64_t rank() const { return Rank; }
  llvm::StringRef backend() const { return Backend; }

  // --- The hot path: the replaying thread alone calls these -----------------
  void beginReplay() {
    if (!Opts.On)
      return;
    Replays.store(++Replay, std::memory_order_relaxed);
    setPosition(0, RankActivity::Idle); // the position is always this replay's
  }
  void endReplay() {
    if (Opts.On)
      setPosition(0, RankActivity::Idle);
  }
  void atCompute(uint32_t Step) {
    if (Opts.On)
      setPosition(Step, RankActivity::Compute);
  }
  /// Comm \p Comm was launched at plan step \p Step; with \p Waiting, this
  /// rank waits for it at once (a blocking comm: started as it is issued).
  void issued(uint32_t Step, uint32_t Comm, bool Waiting = false);
  /// This rank began to wait for comm \p Comm (at plan step \p Step).
  void started(uint32_t Step, uint32_t Comm);
  void completed(uint32_t Comm);
  /// Comm \p Comm ended in an error of kind \p Kind blaming world rank
  /// \p Peer (-1: nobody).
  void failed(uint32_t Comm, ErrorKind Kind, int64_t Peer);
  /// This rank's row of comm \p Comm's split sizes (rows to each member).
  void splitRow(uint32_t Comm, llvm::ArrayRef<int64_t> Row);
  /// Every comm of this replay issued and not ended completed now (a
  /// device backend learns of them together, when its step is done).
  void completedAllIssued();

  // --- Whole-rank facts (any thread) --------------------------------------------
  struct Failure {
    ErrorKind Kind = ErrorKind::Backend;
    int64_t Peer = -1; ///< world rank blamed, or -1
    std::string Message;
  };
  /// Keeps the first failure of the rank (later ones follow from it).
  void noteFailure(Failure F);
  std::optional<Failure> failure() const;

  // --- Reading (any thread) ------------------------------------------------------
  struct Event {
    uint64_t Seq = 0;
    uint64_t Replay = 0; ///< 1 for the first replay
    uint32_t Step = 0, Comm = 0;
    CommState State = CommState::Issued;
    ErrorKind Error = ErrorKind::Backend; ///< when Failed
    int64_t Peer = -1;                    ///< blamed, when Failed
    int64_t IssuedNs = 0, StartedNs = 0, EndedNs = 0; ///< Unix ns, 0: not yet
    std::vector<int64_t> Splits;
    bool SplitsTruncated = false;
  };
  struct Snapshot {
    std::vector<Event> Events; ///< oldest first
    uint64_t Recorded = 0;     ///< events ever recorded
    uint64_t Replays = 0;
    /// Where the rank is in its last replay: the later of its last compute
    /// (or the replay's start or end) and its last event.
    uint32_t PositionStep = 0;
    RankActivity Position = RankActivity::Idle;
    uint32_t Capacity = 0;
    std::optional<Failure> Fail;
    int64_t TakenNs = 0;
  };
  /// A consistent copy of the ring and the rank's facts (each slot whole;
  /// one rewritten while it is read is read again).
  Snapshot snapshot() const;

private:
  struct Slot;
  Slot *slotOf(uint32_t Comm);
  /// A state change of \p S: its time stored, then its state word.
  void setState(Slot &S, CommState State, std::atomic<int64_t> &Time);
  void setPosition(uint32_t Step, RankActivity A) {
    Position.store(uint64_t(Step) << 8 | uint64_t(A), std::memory_order_relaxed);
  }

  const plan::Plan &P;
  int64_t Rank;
  std::string Backend;
  RecordOptions Opts;
  std::optional<CoarseClockUse> Clock;
  uint32_t Mask = 0;
  std::unique_ptr<Slot[]> Slots;
  /// The writer's own: per comm, the number of its last event; the next
  /// event's number; the replay.
  std::vector<uint64_t> LastOf;
  uint64_t NextSeq = 0, Replay = 0;
  /// What readers load.
  std::atomic<uint64_t> Next{0}, Replays{0}, Position{0};
  mutable std::mutex FailureLock;
  std::optional<Failure> Fail;
};

} // namespace collc::rt

#endif
