//===- runtime/local/LocalDriver.h - Ranks as threads of one process -*- C++ -*-===//
//
// The local backend: the embedded default and the engine of the test suite.
// Ranks are threads of one process working on host memory. Each rank
// reduces its own chunk straight from its peers' buffers and writes it
// straight into theirs (no staging copies), in blocks that stay in L1, with
// non-temporal stores for large results; a collective is two rendezvous
// (arrive, complete) that spin briefly before sleeping.
//
// Beyond CollectiveDriver: all_to_all_v, barrier, words,
// split, health, and fault injection for tests.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LOCAL_LOCALDRIVER_H
#define COLLC_RUNTIME_LOCAL_LOCALDRIVER_H

#include "runtime/exec/HostDriverBase.h"
#include "runtime/local/MeetingPoint.h"

#include "llvm/ADT/ArrayRef.h"

#include <atomic>
#include <memory>
#include <optional>

namespace collc::rt::local {

/// One rank's membership of one group.
class Membership {
public:
  Membership(std::shared_ptr<MeetingPoint> G, int Rank) : G(std::move(G)), Rank(Rank) {}
  /// Waits for the operations already enqueued (they hold a plain pointer),
  /// as ncclCommDestroy finishes what was issued.
  ~Membership();
  Membership(const Membership &) = delete;
  Membership &operator=(const Membership &) = delete;
  MeetingPoint &group() const { return *G; }
  int rank() const { return Rank; }
  int size() const { return G->size(); }
  WaitPolicy Wait;
  // One thread at a time issues a rank's operations, and one runs its
  // collectives (a communicator serves one stream at a time, as in NCCL:
  // ranks that issued in different orders would pair the wrong operations
  // anyway). So the counters of collectives have a single writer and
  // advance by a plain load and store rather than a locked
  // read-modify-write on the latency path. Sends and recvs may run on
  // streams of their own, one per peer and direction
  // (runtime/exec/DriverExecutor.h), concurrently with the collectives:
  // they are not counted as pending, and the one counter they share with
  // collectives (operations, for fault injection) is atomic.
  /// The next rendezvous sequence number of this rank's collectives.
  uint64_t nextSeq() { return bump(Seq); }
  uint64_t lastSeq() const { return Seq.load(std::memory_order_relaxed); }
  /// The next operation number (collectives and point-to-point together),
  /// for fault injection.
  uint64_t nextOp() { return Ops.fetch_add(1, std::memory_order_relaxed) + 1; }
  void noteEnqueued() { bump(Enqueued); }
  void noteRetired() {
    Retired.store(Retired.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  /// Collectives enqueued on a stream and not yet run.
  uint64_t pending() const {
    return Enqueued.load(std::memory_order_relaxed) - Retired.load(std::memory_order_acquire);
  }
  /// Set when fault injection killed this rank.
  std::atomic<bool> Killed{false};

private:
  static uint64_t bump(std::atomic<uint64_t> &Counter) {
    uint64_t Next = Counter.load(std::memory_order_relaxed) + 1;
    Counter.store(Next, std::memory_order_relaxed);
    return Next;
  }
  std::atomic<uint64_t> Seq{0}, Ops{0}, Enqueued{0}, Retired{0};
  std::shared_ptr<MeetingPoint> G;
  int Rank;
};

/// Faults the tests inject into a rank (matched by rank within a group).
struct FaultPlan {
  std::string GroupName; ///< empty: every group
  int64_t DelayRank = -1;
  std::chrono::milliseconds Delay{0};
  /// The rank stops at its KillAtOp-th operation (1-based, collectives and
  /// sends/recvs counted together in the group) and never
  /// arrives. Silent: peers find out by timeout, as after a crash;
  /// otherwise they are told at once.
  int64_t KillRank = -1;
  uint64_t KillAtOp = 1;
  bool KillSilently = true;
  /// The rank posts one element more than it was given, at this operation.
  int64_t WrongSizeRank = -1;
  uint64_t WrongSizeAtOp = 1;
};
void setFaultPlan(std::optional<FaultPlan> Plan);

/// Types, elements(), the stream calls and the reductions without a factor
/// come from HostDriverBase.
struct LocalDriver : HostDriverBase<LocalDriver> {
  using Communicator = std::shared_ptr<Membership>;
  using UniqueId = uint64_t;

  static llvm::StringRef name() { return "local"; }
  /// Ranks are threads: a group has at most this many.
  static constexpr size_t MaxRanks = 4096;

  // The driver's operations (runtime/exec/DriverOps.def), as the local
  // backend runs them:
  // - allToAllV: every rank's send count to r must equal r's receive count.
  // - allGatherWords (the plan-digest handshake) runs on the caller's
  //   thread, so the stream plays no part; it needs no outstanding stream
  //   work on the communicator.
  // - split: ranks of equal non-negative color form a new group ordered by
  //   key (ties by rank); null for a negative color.
  // - health never blocks and names a lost peer.
#define COLLC_UNSCALED_OP(Result, Name, Params)
#define COLLC_DRIVER_OP(Result, Name, Params) static Result Name Params;
#include "runtime/exec/DriverOps.def"
};

static_assert(ExecutorDriver<LocalDriver>);

} // namespace collc::rt::local

#endif
