//===- runtime/mpi/MpiSession.h - MPI's lifetime in a process -*- C++ -*-===//
//
// MPI is initialized once per process and finalized once, before exit. The
// program's main owns that through an MpiSession: start() initializes with
// MPI_THREAD_MULTIPLE (the comm stream's worker and the caller both call
// MPI), or adopts an MPI the program initialized itself, and the session
// finalizes what it initialized when destroyed. It also holds the
// process's ArrivalBoard (created at start, freed before finalizing: both
// collective over MPI_COMM_WORLD). The driver refuses to work
// without one (an error value, not MPI's abort). After the process gave up
// on an MPI operation (AbandonedMemory.h) neither is freed nor finalized:
// both would wait for the peer that did not come.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_MPISESSION_H
#define COLLC_RUNTIME_MPI_MPISESSION_H

#include "runtime/mpi/ArrivalBoard.h"

#include "llvm/Support/Error.h"

#include <chrono>
#include <memory>

#include <mpi.h>

namespace collc::rt::mpi {

class MpiSession {
public:
  /// Initializes MPI (or adopts it); an error when the thread level is
  /// below MPI_THREAD_MULTIPLE or MPI was already finalized.
  static llvm::Expected<std::unique_ptr<MpiSession>> start();
  /// Meets every process at a farewell barrier (for farewellWithin() at
  /// most), then frees the board and finalizes MPI if start() initialized
  /// it; when another process did not come, leaves both.
  ~MpiSession();
  MpiSession(const MpiSession &) = delete;
  MpiSession &operator=(const MpiSession &) = delete;

private:
  explicit MpiSession(bool Owns) : Owns(Owns) {}
  static llvm::Expected<std::unique_ptr<MpiSession>> withBoard(std::unique_ptr<MpiSession> S);
  /// Whether every process of the world comes to the farewell barrier
  /// within \p Within (polled: a blocking barrier would wait for ever).
  bool farewell(std::chrono::milliseconds Within);
  bool Owns;
  std::unique_ptr<ArrivalBoard> Board;
  /// MPI_COMM_WORLD's duplicate, made at start when every process is there:
  /// the farewell's, apart from any collective this process gave up on.
  MPI_Comm Farewell = MPI_COMM_NULL;
};

/// Success when MPI is initialized with MPI_THREAD_MULTIPLE and not
/// finalized; otherwise an error that says what to do.
llvm::Error checkMpiReady();

} // namespace collc::rt::mpi

#endif
