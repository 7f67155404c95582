//===- runtime/mpi/ArrivalBoard.h - Who has arrived where, readable by all -*- C++ -*-===//
//
// MPI does not say which rank a collective is waiting for. The arrival
// board holds, per process, the group and number of the last collective it
// entered and, per group of the process, the number of that group's last
// collective. Entering a collective is a few plain stores (no MPI call on
// the latency path).
//
// Two readers. A rank whose wait timed out reads its group's records
// (MPI_Rget on a window over MPI_COMM_WORLD, bounded) and names the ranks
// that are not there yet. And a rank about to enter a blocking MPI call,
// which has no deadline of its own, first waits for every member to have
// announced the same collective: when the members share this host, it
// reads their records directly in shared memory (a window of
// MPI_Win_allocate_shared over the host's processes), which costs no
// message round, unlike a barrier.
//
// A group's records carry a key every member computes alike: the group's
// name and how many groups of that name the process adopted before (groups
// are made collectively, in one order), so two live groups of one name,
// or a group made again under an old name, never read as one.
//
// One board per process, created and freed collectively by the MpiSession
// (at start and before MPI_Finalize), so groups come and go without a
// collective window call each.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_MPI_ARRIVALBOARD_H
#define COLLC_RUNTIME_MPI_ARRIVALBOARD_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace collc::rt::mpi {

class ArrivalBoard {
public:
  /// Groups a process can hold on the board at once; a group beyond them
  /// still names late ranks by the process's last collective, and is
  /// gated by a barrier instead of the board.
  static constexpr unsigned GroupEntries = 32;

  struct Slot {
    uint64_t Group = 0; ///< the group's key (0: none)
    uint64_t Seq = 0;   ///< the number of its collective
  };
  /// What one process shows.
  struct Record {
    Slot Last; ///< the last collective it entered, in any group
    std::array<Slot, GroupEntries> Groups;
    /// The number of group \p Key's last collective there, if it has an
    /// entry (a torn read from a remote window may miss it: diagnostics).
    std::optional<uint64_t> seqOf(uint64_t Key) const;
  };

  /// Collective over MPI_COMM_WORLD.
  static llvm::Expected<std::unique_ptr<ArrivalBoard>> create();
  /// Collective over MPI_COMM_WORLD.
  ~ArrivalBoard();
  ArrivalBoard(const ArrivalBoard &) = delete;
  ArrivalBoard &operator=(const ArrivalBoard &) = delete;

  /// The key of the next group adopted under \p Name (never 0).
  uint64_t keyFor(llvm::StringRef Name);
  /// An entry of this process for group \p Key, or -1 when all are taken.
  int claim(uint64_t Key);
  /// Gives back an entry from claim (or -1: nothing).
  void release(int Entry);
  /// This process entered collective \p Seq of group \p Key (its entry:
  /// \p Entry, or -1 without one).
  void publish(uint64_t Key, int Entry, uint64_t Seq);

  /// Whether \p WorldRank's record is in this host's shared memory.
  bool readsDirectly(int WorldRank) const;
  /// Group \p Key's number at \p WorldRank, read directly (readsDirectly);
  /// nullopt while that process shows no entry for the key.
  std::optional<uint64_t> directSeq(int WorldRank, uint64_t Key) const;
  /// The records of \p WorldRanks (directly where possible, else through
  /// MPI within \p Bound); nullopt for one that could not be read in time.
  std::vector<std::optional<Record>> read(llvm::ArrayRef<int> WorldRanks,
                                          std::chrono::milliseconds Bound);

private:
  /// Words of a record: the last slot, then one slot per group entry.
  static constexpr unsigned Words = 2 + 2 * GroupEntries;

  ArrivalBoard() = default;
  /// Stores \p Value at word \p Word of this process's record, in both
  /// windows.
  void store(unsigned Word, uint64_t Value);
  llvm::Error allocate();

  MPI_Comm World = MPI_COMM_NULL, Host = MPI_COMM_NULL;
  MPI_Win Win = MPI_WIN_NULL;     ///< over the world, for MPI_Rget
  MPI_Win HostWin = MPI_WIN_NULL; ///< shared memory of this host's processes
  uint64_t *Mine = nullptr;       ///< this process's record in Win
  uint64_t *MineShared = nullptr; ///< and in HostWin
  /// Per world rank, its record in HostWin; null for other hosts.
  std::vector<const uint64_t *> Direct;
  std::mutex M; ///< guards the fields below
  llvm::StringMap<uint64_t> Adopted;
  std::array<bool, GroupEntries> Taken{};
  /// Reads that did not finish in time write here later: never freed
  /// before the window.
  std::vector<std::unique_ptr<std::vector<uint64_t>>> Late;
};

/// The board of this process, or null without an MpiSession.
ArrivalBoard *arrivalBoard();
void setArrivalBoard(ArrivalBoard *B);

} // namespace collc::rt::mpi

#endif
