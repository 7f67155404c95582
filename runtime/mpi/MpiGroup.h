//===- runtime/mpi/MpiGroup.h - One rank's membership of an MPI communicator -*- C++ -*-===//
//
// An MPI communicator with what collc adds around it: a timeout, a bounded
// wait for a request that names who did not arrive, and a broken state.
//
// Who did not arrive: before each collective the rank publishes the group
// and the collective's number on the process's ArrivalBoard; a rank whose
// wait times out reads the board of the group's members and names those
// not there yet. For point-to-point the peer is named directly. Before a
// blocking MPI call (which has no deadline) the rank may wait on the board
// for every member to announce the same collective (testArrivals), when
// their records are in this host's shared memory (gatesOnBoard).
//
// A timed-out request cannot be cancelled (MPI has no cancel for
// collectives), so the group is broken from then on: later operations are
// refused at once with the first error, scratch memory the request may
// still write is kept until the process ends (AbandonedMemory.h), and the
// destructor leaves the communicator as it is (so does the MpiSession with
// MPI itself: the process ends without MPI_Finalize).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_MPIGROUP_H
#define COLLC_RUNTIME_MPI_MPIGROUP_H

#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/SpareScratch.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace collc::rt::mpi {

class ArrivalBoard;

/// An MPI return code as an error naming the call and the group.
llvm::Error mpiError(int Code, llvm::StringRef What, llvm::StringRef Group);

class MpiGroup {
public:
  /// Takes ownership of \p Comm.
  static llvm::Expected<std::shared_ptr<MpiGroup>> adopt(MPI_Comm Comm, std::string Name,
                                                        std::chrono::milliseconds Timeout);
  /// Waits for enqueued operations (they hold a plain pointer), then frees
  /// the communicator unless the group is broken.
  ~MpiGroup();
  MpiGroup(const MpiGroup &) = delete;
  MpiGroup &operator=(const MpiGroup &) = delete;

  MPI_Comm comm() const { return Comm; }
  int rank() const { return Rank; }
  int size() const { return Size; }
  const std::string &name() const { return Name; }
  void setTimeout(std::chrono::milliseconds T) { TimeoutMs.store(T.count()); }
  std::chrono::milliseconds timeout() const { return std::chrono::milliseconds(TimeoutMs.load()); }

  /// Announces this rank's next collective on the board, through a gate
  /// before a blocking call or not (\p Gated); returns its number.
  uint64_t arrive(bool Gated = false);
  /// Polls \p Req with MPI_Test until it completes or the timeout passes.
  /// \p Peer >= 0: a point-to-point operation with that rank; otherwise
  /// collective number \p Seq. A timeout breaks the group and names the
  /// rank(s) that did not arrive.
  llvm::Error wait(MPI_Request &Req, llvm::StringRef What, int64_t Peer, uint64_t Seq,
                   MPI_Status *Status = MPI_STATUS_IGNORE);
  /// One MPI_Test of \p Req (wait's step, for a polled stream task): sets
  /// \p Done; not done past \p Deadline, wait's timeout error.
  llvm::Error test(MPI_Request &Req, llvm::StringRef What, int64_t Peer, uint64_t Seq,
                   std::chrono::steady_clock::time_point Deadline, bool &Done,
                   MPI_Status *Status = MPI_STATUS_IGNORE);

  /// Whether testArrivals can run: every member's record is read directly
  /// (one host) and this group has its entry on the board.
  bool gatesOnBoard() const { return OnBoard; }
  /// The most payload one message between members carries eagerly
  /// (EagerLimit.h), the same on every member; 0 when unknown, or when a
  /// member is on another host.
  uint64_t eagerPayload() const { return EagerPayload; }
  /// One look at the board (gatesOnBoard): \p Done when every member has
  /// announced collective \p Seq (or a later one) and none gave up on it
  /// (ArrivalBoard::Verdict: all members pass, or none); not done past
  /// \p Deadline, wait's timeout error, naming who is missing. A member
  /// that announced \p Seq without a gate (its call is nonblocking, which no
  /// blocking call matches) fails it at once, naming that member.
  llvm::Error testArrivals(llvm::StringRef What, uint64_t Seq,
                           std::chrono::steady_clock::time_point Deadline, bool &Done);
  /// The first failure, once broken; success otherwise.
  llvm::Error check() const;
  /// Breaks the group with \p E (returned as is).
  llvm::Error breakWith(llvm::Error E);
  /// Scratch of at least \p Bytes for one operation, kept for the next
  /// (SpareScratch.h): written before it is read, so not zeroed.
  std::shared_ptr<HostPages> scratch(uint64_t Bytes) { return Spare.take(Bytes); }

  /// \p PointToPoint: a send or recv, which may stay in flight on a peer's
  /// stream while a collective runs on the caller's thread (MPI allows it).
  void noteEnqueued(bool PointToPoint = false) {
    Enqueued.fetch_add(1, std::memory_order_relaxed);
    if (!PointToPoint)
      CollectivesEnqueued.fetch_add(1, std::memory_order_relaxed);
  }
  void noteRetired(bool PointToPoint = false) {
    if (!PointToPoint)
      CollectivesRetired.fetch_add(1, std::memory_order_release);
    Retired.fetch_add(1, std::memory_order_release);
  }
  /// Operations enqueued on a stream and not yet run (the destructor waits
  /// for them: they hold a plain pointer).
  uint64_t pending() const {
    return Enqueued.load(std::memory_order_relaxed) - Retired.load(std::memory_order_acquire);
  }
  /// Collectives enqueued and not yet run: what a collective on the
  /// caller's thread (allGatherWords) must not overtake.
  uint64_t pendingCollectives() const {
    return CollectivesEnqueued.load(std::memory_order_relaxed) -
           CollectivesRetired.load(std::memory_order_acquire);
  }

private:
  MpiGroup(MPI_Comm Comm, std::string Name) : Comm(Comm), Name(std::move(Name)) {}
  /// Takes an entry on the process's arrival board, with a key the members
  /// agree on (collective over the new communicator, bounded by the
  /// timeout); no entry unless every member has one.
  llvm::Error joinBoard();
  std::string lateRanks(uint64_t Seq, int64_t &FirstLate);
  /// testArrivals' refusal: member \p Member entered collective \p Seq
  /// without a gate. Gives it up for the gated members (\p Root: the
  /// group's first member's world rank, where the verdict is).
  llvm::Error ungatedMember(llvm::StringRef What, uint64_t Seq, int Member, int Root);
  llvm::Error timedOut(llvm::StringRef What, int64_t Peer, uint64_t Seq);

  MPI_Comm Comm;
  ArrivalBoard *Board = nullptr; ///< the one the entry is on
  uint64_t Key = 0;            ///< the group on the arrival board
  int Entry = -1;              ///< its entry there (-1: none free)
  bool OnBoard = false;        ///< gatesOnBoard()
  uint64_t EagerPayload = 0;   ///< eagerPayload()
  std::vector<int> WorldRanks; ///< of the members, for the board
  int Rank = 0, Size = 1;
  std::string Name;
  std::atomic<int64_t> TimeoutMs{300000};
  std::atomic<uint64_t> Seq{0}, Enqueued{0}, Retired{0}, CollectivesEnqueued{0},
      CollectivesRetired{0};
  std::atomic<bool> Broken{false};
  SpareScratch Spare;
  mutable std::mutex M; ///< guards the fields below
  ErrorKind FailKind = ErrorKind::Broken;
  std::string FailText;
  int64_t FailPeer = -1;
};

} // namespace collc::rt::mpi

#endif
