//===- runtime/shm/ShmTeam.h - The processes of one group on one host -*- C++ -*-===//
//
// A team's members meet in their segment (TeamLayout.h) as the local
// backend's threads meet in a MeetingPoint, and run the local backend's
// algorithms and kernels (runtime/local/Shares.h, Kernels.h) across their
// processes:
//  - up to 32 bytes of input, the payload travels in the arrival line
//    (one rendezvous); up to 1 KiB, in the member's inline buffer (one
//    rendezvous, each computes its own result);
//  - larger, operands that lie in a shared arena (SharedArena.h: a plan's
//    buffers, the executor's own tensors) are read and written where they
//    are, as on threads; others are staged: copied into the member's
//    staging buffer first (and an all_reduce's result copied out after),
//    in rounds of the staging size when they are larger.
// Waits spin, then sleep on the team's futex (runtime/local/Doorbell.h).
//
// Everything read from the segment is input: a peer's post, counts and
// references are copied out once, checked against this member's own
// (validated) call and the layout, and only the copy is used. A corrupt or
// hostile peer makes the collective fail with an error naming it; no size,
// offset or index it wrote is used unchecked, so no member reads or writes
// outside the segment and the arenas. Sequence counters a peer scribbles
// on cost at most a wrong verdict or a timeout.
//
// A member that fails (a timeout, a mismatch no member can finish, a lost
// peer) writes why into the header before it leaves, so the others fail
// at once with the first cause, naming the member it blames. A peer's
// process that ends or stops while awaited is noticed (PeerWatch.h) and
// named.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_SHMTEAM_H
#define COLLC_RUNTIME_SHM_SHMTEAM_H

#include "runtime/local/Doorbell.h"
#include "runtime/local/Shares.h"
#include "runtime/shm/PeerWatch.h"
#include "runtime/shm/SharedSegment.h"
#include "runtime/shm/TeamLayout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace collc::rt::shm {

/// One collective as this member calls it (already validated by the
/// driver's checks: the spans hold what the op needs).
struct TeamOp {
  local::OpHeader Head;
  const char *Src = nullptr; ///< null: no source (a broadcast's non-root, barrier)
  char *Dst = nullptr;
  /// all_to_all_v: elements to and from each member.
  llvm::ArrayRef<uint64_t> SendCounts, RecvCounts;
};

/// Whether member \p Q brings a source to \p H (all but a broadcast's
/// non-roots; none to a barrier).
inline bool bringsSource(const local::OpHeader &H, uint32_t Q) {
  return H.Code == local::OpCode::Broadcast ? int64_t(Q) == H.Root
                                            : H.Code != local::OpCode::Barrier;
}

class ShmTeam {
public:
  struct Member {
    int32_t GroupRank = 0; ///< how errors name it
    int32_t Pid = 0;
  };

  /// The team over \p Seg, which the bootstrap checked against \p L.
  ShmTeam(std::string Group, uint32_t Index, std::vector<Member> Members, SharedSegment Seg,
          TeamLayout L, bool Oversubscribed);
  ~ShmTeam();
  ShmTeam(const ShmTeam &) = delete;
  ShmTeam &operator=(const ShmTeam &) = delete;

  uint32_t index() const { return Index; }
  uint32_t size() const { return Layout.Members; }
  const std::string &group() const { return Group; }
  int32_t groupRankOf(uint32_t I) const { return Members[I].GroupRank; }
  const TeamLayout &layout() const { return Layout; }
  /// The segment's memory (for tests that play a corrupt peer).
  char *base() const { return Seg.data(); }

  /// Runs one collective on this member, on the caller's thread; returns
  /// when this member's part is done.
  llvm::Error collective(const TeamOp &Op, const local::WaitPolicy &W);
  /// The middle of allReduceAround: completes \p Count elements of \p T
  /// at \p Chunk in place.
  using AcrossHosts = llvm::function_ref<llvm::Error(char *Chunk, ElemType T, uint64_t Count)>;
  /// An all_reduce in two halves around \p Across, for a group over
  /// several hosts: each member reduces its chunk of the team's reduction
  /// (Shares.h's allReduceChunk), \p Across completes that chunk in place
  /// (the engine's all_reduce across hosts, on every host's member of this
  /// index), then every member gathers the others' chunks. A narrow float
  /// type (f16, bf16, fp8) crosses hosts as its f32 accumulators and is
  /// rounded once, after. In rounds of the staging size where operands are
  /// staged.
  llvm::Error allReduceAround(const TeamOp &Op, const local::WaitPolicy &W, AcrossHosts Across);
  /// Sends \p Bytes of \p T to member \p To (pieces through their channel;
  /// returns once \p To took the last).
  llvm::Error send(uint32_t To, const char *Data, uint64_t Bytes, ElemType T,
                   const local::WaitPolicy &W);
  /// Receives exactly \p Bytes of \p T from member \p From: a message of
  /// another size or type is refused on both sides.
  llvm::Error recv(uint32_t From, char *Data, uint64_t Bytes, ElemType T,
                   const local::WaitPolicy &W);

  /// Never blocks: the team's first failure, or a peer whose process ended.
  llvm::Error health();
  /// Breaks the team for every member with \p Why (the first cause stays).
  void fail(llvm::Error Why);

private:
  /// A member's post as this member copied it out of the segment, with its
  /// all_to_all_v counts (its sends, then its receives).
  struct PostCopy {
    SharedPost P;
    llvm::SmallVector<uint64_t, 16> Counts;
  };

  TeamHeader &header() const { return *reinterpret_cast<TeamHeader *>(Seg.data()); }
  MemberSlot &slot(uint32_t R) const {
    return *reinterpret_cast<MemberSlot *>(Seg.data() + Layout.slot(R));
  }
  char *staging(uint32_t R, uint64_t Seq) const { return Seg.data() + Layout.staging(R, Seq); }
  uint64_t *countsOf(uint32_t R, uint64_t Seq) const {
    return reinterpret_cast<uint64_t *>(Seg.data() + Layout.counts(R, Seq));
  }
  ChannelHead &channel(uint32_t From, uint32_t To) const {
    return *reinterpret_cast<ChannelHead *>(Seg.data() + Layout.channel(From, To));
  }

  /// The tiny, inline and large paths of collective().
  llvm::Error runTiny(const TeamOp &Op, uint64_t Seq, const local::WaitPolicy &W);
  llvm::Error runInline(const TeamOp &Op, uint64_t Seq, const local::WaitPolicy &W);
  /// \p Across: the hierarchical all_reduce's middle (allReduceAround).
  llvm::Error runLarge(const TeamOp &Op, uint64_t Seq, const local::WaitPolicy &W,
                       AcrossHosts Across);
  /// One run of the large path: its post, the peers' operands, its rounds
  /// (TeamRounds.cpp).
  class LargeRun;

  /// Writes this member's post (and mailbox) for \p Seq and arrives.
  void publish(uint64_t Seq, const SharedPost &P, const char *Data, uint64_t Bytes, bool Wake);
  /// Each member's own whole result from \p Srcs (the tiny and inline
  /// paths: copies every member made).
  void runWhole(const TeamOp &Op, llvm::ArrayRef<const char *> Srcs);
  /// Spins, then sleeps on the team's doorbell, until \p Ready, an
  /// interrupt (the team broke, a member of \p Late was lost), or the
  /// timeout.
  llvm::Expected<local::WaitOutcome>
  waitOn(llvm::function_ref<bool()> Ready,
         llvm::function_ref<llvm::SmallVector<uint32_t, 8>()> Late, const local::WaitPolicy &W);
  /// Waits until every member's counter (Arrived, Done, or the mailbox's)
  /// reaches \p Seq; \p What names the wait in a timeout.
  enum class Counter { Arrived, Done, Mailbox };
  llvm::Error waitAll(Counter C, uint64_t Seq, const local::WaitPolicy &W,
                      llvm::function_ref<std::string()> What);
  /// Waits until \p Ready, a condition on the channel with member \p Peer.
  llvm::Error waitForPeer(llvm::function_ref<bool()> Ready, uint32_t Peer,
                          const local::WaitPolicy &W, llvm::function_ref<std::string()> What);
  /// Arrives at round \p Seq (no new post) and waits for everyone.
  llvm::Error arriveRound(uint64_t Seq, const TeamOp &Op, const local::WaitPolicy &W);
  /// Signals the end of this member's share of \p Seq and waits for all.
  llvm::Error complete(uint64_t Seq, const TeamOp &Op, const local::WaitPolicy &W);
  /// Every member's post for \p Seq, copied and checked against \p Op
  /// (and, for all_to_all_v, their counts); a mismatch every member
  /// reaches alike is returned with \p Agreed set.
  llvm::Error copyPosts(const TeamOp &Op, uint64_t Seq,
                        llvm::SmallVectorImpl<PostCopy> &Posts, bool &Agreed);
  /// A Mismatch all members reached: finishes \p Seq together (the team
  /// stays usable) and returns it.
  llvm::Error finishRefused(llvm::Error Mismatch, uint64_t Seq, const TeamOp &Op,
                            const local::WaitPolicy &W);
  /// Where member \p Q's operand \p Ref lies in this process, \p Need bytes
  /// of it checked to be in an arena every member maps; or an error naming
  /// \p Q and \p What ("source").
  llvm::Expected<char *> resolve(uint32_t Q, const OperandRef &Ref, uint64_t Need,
                                 llvm::StringRef What, const TeamOp &Op);
  /// Reads the arenas every member maps again where the registry changed
  /// (under ArenaLock).
  void refreshArenas();
  /// This member's operand at \p P of \p Bytes as a reference into an
  /// arena every member maps, if it is in one.
  std::optional<OperandRef> shared(const void *P, uint64_t Bytes);

  /// Fails the wait when the team broke or an awaited member's process is
  /// lost; \p Late lists the awaited members.
  llvm::Error interrupt(std::chrono::steady_clock::time_point Now,
                        llvm::function_ref<llvm::SmallVector<uint32_t, 8>()> Late);
  llvm::Error brokenError(bool InFlight) const;
  /// Breaks the team with \p Why (the first cause stays) and returns the
  /// team's cause, as every member's wait will.
  llvm::Error breakWith(llvm::Error Why);
  std::string memberName(uint32_t I) const;
  std::string opName(const TeamOp &Op, uint64_t Seq) const;

  std::string Group;
  uint32_t Index;
  std::vector<Member> Members;
  SharedSegment Seg;
  TeamLayout Layout;
  bool Oversubscribed;
  /// This member's collective counter (one thread runs its collectives).
  uint64_t Seq = 0;
  /// This member's send and recv piece counters, per peer (a stream of its
  /// own per peer and direction runs each).
  std::unique_ptr<std::atomic<uint64_t>[]> SentPieces, TakenPieces;
  /// Guards Watch and LastWatch (waits of several streams may check).
  std::mutex WatchLock;
  PeerWatch Watch;
  std::chrono::steady_clock::time_point LastWatch{};
  /// allReduceAround's f32 partials of a narrow type.
  std::vector<float> Widened;
  /// The arenas every member maps, as of ArenaGeneration (SharedArena.h).
  struct UsableArena {
    uint64_t Id;
    char *Base;
    uint64_t Bytes;
  };
  std::mutex ArenaLock;
  uint64_t ArenaGeneration = ~uint64_t(0);
  std::vector<UsableArena> Arenas;
};

} // namespace collc::rt::shm

#endif
