//===- runtime/mpi/MpiSession.cpp - MPI's lifetime in a process -----------===//

#include "runtime/mpi/MpiSession.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/mpi/AbandonedMemory.h"
#include "runtime/mpi/ArrivalBoard.h"
#include "runtime/mpi/EagerLimit.h"

#include "llvm/Support/FormatVariadic.h"

#include <mpi.h>

#include <chrono>
#include <thread>

using namespace llvm;

namespace collc::rt::mpi {

namespace {

const char *levelName(int Level) {
  switch (Level) {
  case MPI_THREAD_SINGLE:
    return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED:
    return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED:
    return "MPI_THREAD_SERIALIZED";
  default:
    return "MPI_THREAD_MULTIPLE";
  }
}

Error levelTooLow(int Level) {
  return makeError(ErrorKind::Unsupported,
                   formatv("MPI provides {0}; collc's mpi backend needs MPI_THREAD_MULTIPLE (its "
                           "comm stream calls MPI from a thread of its own)",
                           levelName(Level)));
}

} // namespace

Expected<std::unique_ptr<MpiSession>>
MpiSession::withBoard(std::unique_ptr<MpiSession> Session) {
  Expected<std::unique_ptr<ArrivalBoard>> B = ArrivalBoard::create();
  if (!B)
    return B.takeError();
  Session->Board = std::move(*B);
  setArrivalBoard(Session->Board.get());
  if (MPI_Comm_dup(MPI_COMM_WORLD, &Session->Farewell) != MPI_SUCCESS)
    return makeError(ErrorKind::Backend, "MPI_Comm_dup of MPI_COMM_WORLD failed");
  return Session;
}

Expected<std::unique_ptr<MpiSession>> MpiSession::start() {
  if (Error E = refuseMisreadEagerLimits())
    return E;
  int Finalized = 0;
  MPI_Finalized(&Finalized);
  if (Finalized)
    return makeError(ErrorKind::InvalidArgument, "MPI was already finalized in this process");
  int Initialized = 0;
  MPI_Initialized(&Initialized);
  if (Initialized) {
    if (Error E = checkMpiReady())
      return E;
    return withBoard(std::unique_ptr<MpiSession>(new MpiSession(false)));
  }
  int Provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &Provided) != MPI_SUCCESS)
    return makeError(ErrorKind::Backend, "MPI_Init_thread failed");
  auto Session = std::unique_ptr<MpiSession>(new MpiSession(true));
  if (Provided < MPI_THREAD_MULTIPLE)
    return levelTooLow(Provided); // the session finalizes what it started
  return withBoard(std::move(Session));
}

bool MpiSession::farewell(std::chrono::milliseconds Within) {
  MPI_Request Req;
  if (Farewell == MPI_COMM_NULL || MPI_Ibarrier(Farewell, &Req) != MPI_SUCCESS)
    return false;
  auto Until = std::chrono::steady_clock::now() + Within;
  int Done = 0;
  while (MPI_Test(&Req, &Done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !Done &&
         std::chrono::steady_clock::now() < Until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return Done; // a barrier not done stays pending: MPI is left as it is
}

MpiSession::~MpiSession() {
  int Finalized = 0;
  MPI_Finalized(&Finalized);
  // Freeing the board and finalizing wait for every process of the world:
  // after this one gave up on a peer (AbandonedMemory.h), for as long as
  // that peer stays away, and Open MPI was seen to crash in that wait when
  // the peer came back. So the processes first meet at a barrier of their
  // own, for a bounded time (every process: one that gave up cannot tell
  // which of its peers did, and a failure on shared memory is not MPI's);
  // when one did not come there in time, MPI is left as it is, and mpirun,
  // seeing a process end without MPI_Finalize, ends the job.
  bool Leave = Finalized || !farewell(farewellWithin());
  if (!Leave && Farewell != MPI_COMM_NULL)
    MPI_Comm_free(&Farewell);
  if (Board) {
    setArrivalBoard(nullptr);
    if (!Leave)
      Board.reset();
    else
      (void)Board.release(); // freed by MPI, or left to the process's end
  }
  if (Owns && !Leave)
    MPI_Finalize();
}

Error checkMpiReady() {
  int Initialized = 0, Finalized = 0;
  MPI_Initialized(&Initialized);
  MPI_Finalized(&Finalized);
  if (!Initialized || Finalized)
    return makeError(ErrorKind::InvalidArgument,
                     Finalized ? "MPI is finalized: the mpi backend cannot run after MpiSession ends"
                               : "MPI is not initialized: the program's main must hold an "
                                 "MpiSession (runtime/mpi/MpiSession.h)");
  int Level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&Level);
  if (Level < MPI_THREAD_MULTIPLE)
    return levelTooLow(Level);
  return Error::success();
}

} // namespace collc::rt::mpi
