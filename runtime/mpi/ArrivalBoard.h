//===- runtime/mpi/ArrivalBoard.h - Who has arrived where, readable by all -*- C++ -*-===//
//
// MPI does not say which rank a collective is waiting for. The arrival
// board is one MPI window over MPI_COMM_WORLD (MPI_Win_allocate: on one
// host Open MPI maps it as shared memory, so a read needs nothing from the
// target) holding, per process, the group and number of the last
// collective it entered. Entering a collective is two plain stores (no MPI
// call on the latency path); a rank whose wait timed out reads its group's
// slots (MPI_Rget, bounded) and names the ranks that are not there yet.
//
// One board per process, created and freed collectively by the MpiSession
// (at start and before MPI_Finalize), so groups come and go without a
// collective window call each.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_ARRIVALBOARD_H
#define COLLC_RUNTIME_MPI_ARRIVALBOARD_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace collc::rt::mpi {

class ArrivalBoard {
public:
  struct Slot {
    uint64_t Group = 0; ///< a hash of the group's name (0: none yet)
    uint64_t Seq = 0;   ///< the number of its collective
  };
  /// Collective over MPI_COMM_WORLD.
  static llvm::Expected<std::unique_ptr<ArrivalBoard>> create();
  /// Collective over MPI_COMM_WORLD.
  ~ArrivalBoard();
  ArrivalBoard(const ArrivalBoard &) = delete;
  ArrivalBoard &operator=(const ArrivalBoard &) = delete;

  /// This process entered collective \p Seq of group \p Group.
  void publish(uint64_t Group, uint64_t Seq);
  /// The slots of \p WorldRanks, read within \p Bound; nullopt for a slot
  /// that could not be read in time.
  std::vector<std::optional<Slot>> read(llvm::ArrayRef<int> WorldRanks,
                                        std::chrono::milliseconds Bound);

private:
  ArrivalBoard() = default;
  MPI_Comm Comm = MPI_COMM_NULL;
  MPI_Win Win = MPI_WIN_NULL;
  uint64_t *Mine = nullptr;
  /// Reads that did not finish in time write here later: never freed
  /// before the window.
  std::mutex LateMutex;
  std::vector<std::unique_ptr<std::vector<uint64_t>>> Late;
};

/// The board of this process, or null without an MpiSession.
ArrivalBoard *arrivalBoard();
void setArrivalBoard(ArrivalBoard *B);

} // namespace collc::rt::mpi

#endif
