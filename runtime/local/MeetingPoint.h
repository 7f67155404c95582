//===- runtime/local/MeetingPoint.h - Where a local group's threads meet -*- C++ -*-===//
//
// The shared state of one local group (a MeetingPoint; the IR's and the plan's
// Group say who is in a group, this is where its threads meet): a slot per
// rank where it posts what it brings to each collective, sequence counters
// for arrival and completion, and a channel per ordered pair of ranks for
// send/recv.
//
// A collective is two rendezvous: everyone arrives (and posts pointers),
// everyone does its share of the work reading and writing the others'
// buffers directly, everyone signals done (so nobody reuses a buffer that a
// peer still reads). Waits spin briefly, then sleep, and give up at the
// deadline naming the ranks that did not come. A failure breaks the group:
// every member's next wait fails at once with the same cause instead of
// hanging or reading stale data.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LOCAL_MEETINGPOINT_H
#define COLLC_RUNTIME_LOCAL_MEETINGPOINT_H

#include "ir/Types.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/local/Doorbell.h"
#include "runtime/local/Shares.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace collc::rt::local {

/// What one rank brings to one collective.
struct Post {
  OpCode Code = OpCode::Barrier;
  ElemType Elem = ElemType::U8;
  ReduceOp Op = ReduceOp::Sum;
  double Scale = 1.0;
  uint64_t Count = 0; ///< elements, as the op defines them
  int64_t Root = -1;
  const char *Src = nullptr;
  char *Dst = nullptr;
  const uint64_t *SendCounts = nullptr; ///< all_to_all_v, elements per peer
  const uint64_t *RecvCounts = nullptr;
};

class MeetingPoint {
public:
  MeetingPoint(std::string Name, int Size);

  const std::string &name() const { return Name; }
  int size() const { return Size; }

  /// Records that \p Rank joined; a rank may join once.
  llvm::Error claim(int Rank);

  /// Posts \p P as rank \p Rank's part of collective \p Seq (1, 2, ...) and
  /// waits until every rank has posted.
  llvm::Error arrive(int Rank, uint64_t Seq, const Post &P, const WaitPolicy &W);
  /// What \p Rank posted for collective \p Seq (after arrive()). Posts
  /// alternate between two slots, so a rank may post Seq + 1 while a slower
  /// peer still reads Seq.
  const Post &post(int Rank, uint64_t Seq) const { return Slots[Rank].P[Seq & 1]; }
  /// Rank \p Rank's inline buffer for collective \p Seq: small payloads are
  /// copied here so the collective needs one rendezvous instead of two.
  char *inlineData(int Rank, uint64_t Seq) { return Slots[Rank].Inline[Seq & 1]; }
  static constexpr uint64_t InlineBytes = 1024;

  /// Tiny payloads travel in the mailbox itself: the arrival flag, what the
  /// op is, and the data share one cache line, so a peer learns all of it
  /// with one line transfer (the latency path).
  static constexpr uint64_t MailboxBytes = 32;
  /// Posts like arrive() and also puts \p Bytes of \p Data (at most
  /// MailboxBytes) in the mailbox; waits until every rank's mailbox holds
  /// \p Seq. Then mailboxData() gives each rank's copy.
  llvm::Error arriveTiny(int Rank, uint64_t Seq, const Post &P, const char *Data, uint64_t Bytes,
                         const WaitPolicy &W);
  const char *mailboxData(int Rank, uint64_t Seq) const { return Slots[Rank].Box[Seq & 1].Data; }
  /// Whether every rank's mailbox for \p Seq describes the same operation as
  /// rank 0's; the first rank that differs, or -1.
  int firstMailboxMismatch(uint64_t Seq) const;
  /// Signals that \p Rank finished its share of collective \p Seq and waits
  /// until everyone has.
  llvm::Error complete(int Rank, uint64_t Seq, const WaitPolicy &W);

  /// A rendezvous send: posts the data and waits until the receiver copied it.
  llvm::Error send(int From, int To, const char *Data, uint64_t Bytes, ElemType T,
                   const WaitPolicy &W);
  /// Waits for the matching send, checks it brings exactly \p Bytes of \p T,
  /// and copies it into \p Data.
  llvm::Error recv(int To, int From, char *Data, uint64_t Bytes, ElemType T, const WaitPolicy &W);

  /// A rank is gone: every wait that needs it fails at once, naming it.
  void markDead(int Rank, const std::string &Why);
  /// Breaks the group for everyone; later operations fail with \p Why.
  void fail(llvm::Error Why);
  /// Never blocks: the cause if the group is broken or a peer is gone.
  llvm::Error health(int Rank) const;
  bool broken() const { return Broken.load(std::memory_order_acquire); }

private:
  struct alignas(64) Mailbox {
    std::atomic<uint64_t> Seq{0};
    uint8_t Code = 0, Elem = 0, Op = 0;
    int32_t Root = -1;
    uint64_t Count = 0;
    double Scale = 1.0;
    char Data[MailboxBytes];
  };
  static_assert(sizeof(Mailbox) == 64, "a mailbox is one cache line");
  struct alignas(64) Slot {
    std::atomic<uint64_t> Arrived{0};
    std::atomic<uint64_t> Done{0};
    std::atomic<bool> Dead{false};
    bool Claimed = false;
    Post P[2];
    Mailbox Box[2];
    alignas(64) char Inline[2][InlineBytes];
  };
  /// Writes the post, the mailbox and both arrival flags; with \p Wake,
  /// also wakes sleeping peers.
  void publish(int Rank, uint64_t Seq, const Post &P, const char *Data, uint64_t Bytes, bool Wake);
  struct alignas(64) Channel {
    std::atomic<uint64_t> Posted{0};   ///< sender's sequence
    std::atomic<uint64_t> Taken{0};    ///< receiver's sequence
    std::atomic<bool> Mismatch{false}; ///< the receiver refused the last post
    const char *Data = nullptr;
    uint64_t Bytes = 0;
    ElemType Elem = ElemType::U8;
    uint64_t WantedBytes = 0; ///< what the receiver expected, on a mismatch
    ElemType WantedElem = ElemType::U8;
    uint64_t SendSeq = 0; ///< owned by the sender
    uint64_t RecvSeq = 0; ///< owned by the receiver
  };

  /// Spins, then sleeps on the doorbell (Doorbell.h), until \p Ready, the
  /// group breaks, or the deadline. \p Missing lists the ranks still
  /// awaited (for blame).
  llvm::Error waitUntil(llvm::function_ref<bool()> Ready,
                        llvm::function_ref<std::vector<int>()> Missing, const WaitPolicy &W,
                        llvm::function_ref<std::string()> What);
  llvm::Error brokenError(bool InFlight = false) const;
  /// Wakes the sleepers after the caller's stores.
  void wake() { ring(Bell, BellScope::ThisProcess); }

  std::string Name;
  int Size;
  bool Oversubscribed; ///< more ranks than CPUs to run them
  std::unique_ptr<Slot[]> Slots;
  std::unique_ptr<Channel[]> Channels; // [From * Size + To]
  std::atomic<bool> Broken{false};
  Doorbell Bell;
  mutable std::mutex M;
  // Set once, under M, when the group breaks.
  std::string BrokenWhy;
  ErrorKind BrokenKind = ErrorKind::Broken;
  int64_t BrokenPeer = -1;
};

} // namespace collc::rt::local

#endif
