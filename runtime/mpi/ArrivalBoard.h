//===- runtime/mpi/ArrivalBoard.h - Who has arrived where, readable by all -*- C++ -*-===//
//
// MPI does not say which rank a collective is waiting for. The arrival
// board holds, per process, the group and number of the last collective it
// entered and, per group of the process, the number of that group's last
// collective. Entering a collective is a few plain stores (no MPI call on
// the latency path).
//
// Two readers. A rank whose wait timed out reads its group's records
// (directly on this host, else MPI_Rget on a window over MPI_COMM_WORLD,
// bounded) and names the ranks that are not there yet. And a rank about to enter a blocking MPI call,
// which has no deadline of its own, first waits for every member to have
// announced the same collective: when the members share this host, it
// reads their records directly in shared memory (a window of
// MPI_Win_allocate_shared over the host's processes), which costs no
// message round, unlike a barrier.
//
// A group's entry carries a key its members agree on when they make the
// group (MpiGroup::joinBoard, one small all_reduce): its name and an ordinal
// above every ordinal any member gave that name before, so two live groups
// of one name, or a group made again under an old name, never read as one.
// They agree the same way whether every member has an entry free, so all
// or none of them gate on the board.
//
// Memory: each word is written by its owner alone with atomic stores and
// read with atomic loads (x86 and the compilers this builds with keep their
// order across processes in shared memory; MPI's separate memory model
// would ask for MPI_Win_sync, which costs a call per look).
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

  /// The lowest ordinal this process has not given a group named \p Name.
  uint64_t nextOrdinal(llvm::StringRef Name);
  /// The members agreed on ordinal \p Ordinal for a group named \p Name:
  /// this process gives that name higher ones from now on. Returns the
  /// group's key (never 0).
  uint64_t settle(llvm::StringRef Name, uint64_t Ordinal);
  /// Reserves an entry of this process (showing no key yet), or -1 when
  /// all are taken.
  int reserve();
  /// Entry \p Entry (from reserve) shows group \p Key, at number 0.
  void assign(int Entry, uint64_t Key);
  /// Gives back an entry from reserve (or -1: nothing).
  void release(int Entry);
  /// This process entered collective \p Seq of group \p Key (its entry:
  /// \p Entry, or -1 without one), through a gate before a blocking call
  /// or not (\p Gated).
  void publish(uint64_t Key, int Entry, uint64_t Seq, bool Gated);

  /// A gate's outcome for one collective: every member passes, or none
  /// does (member \p By gave up at its deadline). The first member to
  /// decide writes it in the entry of the group's first member; the others
  /// obey it, so none enters a blocking call that another will never make.
  struct Verdict {
    bool Passed = false;
    int By = 0; ///< the deciding member's rank in the group
  };
  /// Collective \p Seq's verdict at \p RootWorldRank (the group's first
  /// member, on this host), if written.
  std::optional<Verdict> verdict(int RootWorldRank, uint64_t Key, uint64_t Seq) const;
  /// Writes \p Mine as collective \p Seq's verdict unless one is there,
  /// and returns the one there then; nullopt when the root shows no entry
  /// for \p Key.
  std::optional<Verdict> decide(int RootWorldRank, uint64_t Key, uint64_t Seq, Verdict Mine);

  /// Whether \p WorldRank's record is in this host's shared memory.
  bool readsDirectly(int WorldRank) const;
  /// Where a process is in one group: its last collective's number, and the
  /// number of the last it entered through a gate (a member that shows
  /// Seq but not Gated at Seq went on without one).
  struct Arrival {
    uint64_t Seq = 0, Gated = 0;
  };
  /// Group \p Key's arrival at \p WorldRank, read directly (readsDirectly);
  /// nullopt while that process shows no entry for the key.
  std::optional<Arrival> directArrival(int WorldRank, uint64_t Key) const;
  /// The records of \p WorldRanks (directly where possible, else through
  /// MPI within \p Bound); nullopt for one that could not be read in time.
  std::vector<std::optional<Record>> read(llvm::ArrayRef<int> WorldRanks,
                                          std::chrono::milliseconds Bound);

private:
  /// Words of a record: the last slot, then per group entry its key, its
  /// number, the verdict word (used in the group's first member) and the
  /// number of its last gated collective.
  static constexpr unsigned Words = 2 + 4 * GroupEntries;
  /// The entry of \p Key in \p WorldRank's record on this host, or null.
  uint64_t *directEntry(int WorldRank, uint64_t Key) const;

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
  std::vector<uint64_t *> Direct;
  std::mutex M; ///< guards the fields below
  llvm::StringMap<uint64_t> Adopted;
  std::array<bool, GroupEntries> Taken{};
};

/// The board of this process, or null without an MpiSession.
ArrivalBoard *arrivalBoard();
void setArrivalBoard(ArrivalBoard *B);

} // namespace collc::rt::mpi

#endif
