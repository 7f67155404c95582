//===- runtime/mpi/MpiRequest.h - One MPI request of a polled stream task -*- C++ -*-===//
//
// The mpi driver's operations are polled HostStream tasks: the first call
// issues MPI's nonblocking call (on the issuing thread when the stream has
// nothing before it), each later call is one MPI_Test, by whichever thread
// runs the stream then. This is the request's state between those calls,
// with its deadline; a timeout is MpiGroup's error, naming who is missing.
// Plain data, so a task that holds one moves by copying bytes.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_MPIREQUEST_H
#define COLLC_RUNTIME_MPI_MPIREQUEST_H

#include "runtime/exec/HostStream.h"
#include "runtime/mpi/AbandonedMemory.h"
#include "runtime/mpi/MpiGroup.h"

namespace collc::rt::mpi {

class MpiRequest {
public:
  bool started() const { return Started; }

  /// Starts the operation with \p Start (returns MPI's code; a collective,
  /// \p Peer < 0, is first announced on the arrival board) unless started
  /// (or the group is broken: its first failure),
  /// then tests it once: \p Q.More while it has not completed. On an error
  /// \p Keep (scratch the request may still write) lives on
  /// (AbandonedMemory.h).
  template <typename StartF, typename KeepT = std::nullptr_t>
  llvm::Error run(MpiGroup &G, HostStream::Poll &Q, llvm::StringRef Op, int64_t With,
                  StartF Start, const KeepT &Keep = nullptr,
                  MPI_Status *Status = MPI_STATUS_IGNORE) {
    if (!Started) {
      if (llvm::Error E = G.check())
        return E;
      What = Op;
      Peer = With;
      Seq = Peer < 0 ? G.arrive() : 0;
      Deadline = std::chrono::steady_clock::now() + G.timeout();
      Started = true;
      if (int Rc = Start(&Req); Rc != MPI_SUCCESS)
        return G.breakWith(mpiError(Rc, What, G.name()));
    }
    bool Done = false;
    if (llvm::Error E = G.test(Req, What, Peer, Seq, Deadline, Done, Status)) {
      if constexpr (!std::is_same_v<KeepT, std::nullptr_t>)
        if (Keep)
          keepForAbandonedRequest(Keep);
      return E;
    }
    Q.More = !Done;
    return llvm::Error::success();
  }

private:
  MPI_Request Req = MPI_REQUEST_NULL;
  llvm::StringRef What;
  int64_t Peer = -1;
  uint64_t Seq = 0;
  std::chrono::steady_clock::time_point Deadline;
  bool Started = false;
};

} // namespace collc::rt::mpi

#endif
