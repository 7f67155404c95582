//===- runtime/mpi/ArrivalGate.h - Wait on the board before a blocking call -*- C++ -*-===//
//
// A blocking MPI collective has no deadline: once in it, a rank waits for
// a stalled peer forever. So before one, a polled stream task passes a
// gate that has a deadline. On one host the gate is the arrival board
// (MpiGroup::testArrivals): each call looks whether every member has
// announced this collective, reading their records in shared memory, with
// no message and no MPI call; the members then agree on one verdict (pass,
// or given up at someone's deadline), so a member that arrives as another
// gives up is refused too instead of entering a call alone. Elsewhere
// (members on several hosts, or no board entry for the group) it is an
// MPI_Ibarrier, polled like any request: a round of messages, which with
// more processes than cores waits for descheduled peers once more, and
// whose completion on a late member after another gave up still lets that
// member into the blocking call.
//
// Plain data, like the MpiRequest the barrier runs on (the task's own: a
// gated task starts no other request before it passes).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_ARRIVALGATE_H
#define COLLC_RUNTIME_MPI_ARRIVALGATE_H

#include "runtime/mpi/MpiRequest.h"

namespace collc::rt::mpi {

class ArrivalGate {
public:
  /// Announced on the board (a barrier's start is its request's).
  bool started() const { return Started; }

  /// Announces the collective \p What on the first call, then looks once
  /// whether every member has: \p Q.More until they have. A timeout breaks
  /// the group, naming the ranks not there. Without the board the barrier
  /// runs on \p Barrier.
  llvm::Error run(MpiGroup &G, HostStream::Poll &Q, llvm::StringRef What, MpiRequest &Barrier) {
    if (!G.gatesOnBoard())
      return Barrier.run(G, Q, What, -1, [&](MPI_Request *Req) {
        return MPI_Ibarrier(G.comm(), Req);
      });
    if (!Started) {
      if (llvm::Error E = G.check())
        return E;
      Seq = G.arrive(/*Gated=*/true);
      Deadline = std::chrono::steady_clock::now() + G.timeout();
      Started = true;
    }
    if (!Passed)
      if (llvm::Error E = G.testArrivals(What, Seq, Deadline, Passed))
        return E;
    Q.More = !Passed;
    return llvm::Error::success();
  }

private:
  uint64_t Seq = 0;
  std::chrono::steady_clock::time_point Deadline;
  bool Started = false, Passed = false;
};

} // namespace collc::rt::mpi

#endif
