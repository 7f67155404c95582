//===- runtime/mpi/ArrivalBoard.cpp - Who has arrived where, readable by all -===//

#include "runtime/mpi/ArrivalBoard.h"

#include "runtime/exec/RuntimeError.h"

#include <atomic>
#include <sched.h>

using namespace llvm;

namespace collc::rt::mpi {

namespace {
std::atomic<ArrivalBoard *> Current{nullptr};
} // namespace

ArrivalBoard *arrivalBoard() { return Current.load(std::memory_order_acquire); }
void setArrivalBoard(ArrivalBoard *B) { Current.store(B, std::memory_order_release); }

Expected<std::unique_ptr<ArrivalBoard>> ArrivalBoard::create() {
  std::unique_ptr<ArrivalBoard> B(new ArrivalBoard());
  MPI_Comm_dup(MPI_COMM_WORLD, &B->Comm);
  MPI_Comm_set_errhandler(B->Comm, MPI_ERRORS_RETURN);
  void *Base = nullptr;
  if (MPI_Win_allocate(2 * sizeof(uint64_t), sizeof(uint64_t), MPI_INFO_NULL, B->Comm, &Base,
                       &B->Win) != MPI_SUCCESS) {
    B->Win = MPI_WIN_NULL;
    return makeError(ErrorKind::Backend, "MPI_Win_allocate of the arrival board failed");
  }
  B->Mine = static_cast<uint64_t *>(Base);
  B->Mine[0] = B->Mine[1] = 0;
  MPI_Win_set_errhandler(B->Win, MPI_ERRORS_RETURN);
  // One passive epoch for the board's life: reads need no other call.
  if (MPI_Win_lock_all(MPI_MODE_NOCHECK, B->Win) != MPI_SUCCESS)
    return makeError(ErrorKind::Backend, "MPI_Win_lock_all of the arrival board failed");
  return B;
}

ArrivalBoard::~ArrivalBoard() {
  if (Win != MPI_WIN_NULL) {
    MPI_Win_unlock_all(Win);
    MPI_Win_free(&Win);
  }
  if (Comm != MPI_COMM_NULL)
    MPI_Comm_free(&Comm);
}

void ArrivalBoard::publish(uint64_t Group, uint64_t Seq) {
  __atomic_store_n(&Mine[0], Group, __ATOMIC_RELAXED);
  __atomic_store_n(&Mine[1], Seq, __ATOMIC_RELEASE);
}

std::vector<std::optional<ArrivalBoard::Slot>> ArrivalBoard::read(ArrayRef<int> WorldRanks,
                                                                   std::chrono::milliseconds Bound) {
  size_t N = WorldRanks.size();
  auto Values = std::make_unique<std::vector<uint64_t>>(2 * N, 0);
  std::vector<MPI_Request> Reqs(N, MPI_REQUEST_NULL);
  for (size_t I = 0; I != N; ++I)
    if (MPI_Rget(Values->data() + 2 * I, 2, MPI_UINT64_T, WorldRanks[I], 0, 2, MPI_UINT64_T, Win,
                 &Reqs[I]) != MPI_SUCCESS)
      Reqs[I] = MPI_REQUEST_NULL;
  std::vector<bool> Done(N, false);
  auto Deadline = std::chrono::steady_clock::now() + Bound;
  for (bool Waiting = true; Waiting && std::chrono::steady_clock::now() < Deadline;) {
    Waiting = false;
    for (size_t I = 0; I != N; ++I) {
      if (Reqs[I] == MPI_REQUEST_NULL)
        continue;
      int Flag = 0;
      if (MPI_Test(&Reqs[I], &Flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        Reqs[I] = MPI_REQUEST_NULL;
      else if (Flag)
        Done[I] = true;
      else
        Waiting = true;
    }
    if (Waiting)
      sched_yield();
  }
  std::vector<std::optional<Slot>> Out(N);
  bool Pending = false;
  for (size_t I = 0; I != N; ++I) {
    if (Done[I])
      Out[I] = Slot{(*Values)[2 * I], (*Values)[2 * I + 1]};
    Pending |= Reqs[I] != MPI_REQUEST_NULL && !Done[I];
  }
  if (Pending) {
    std::lock_guard<std::mutex> L(LateMutex);
    Late.push_back(std::move(Values));
  }
  return Out;
}

} // namespace collc::rt::mpi
