//===- runtime/shm/SharedArena.h - Executor memory the host's processes share -*- C++ -*-===//
//
// An arena is one segment per host, made for the processes of a group on
// that host (the executor's world): each process takes its buffers from
// its own region, and every process maps all of it. A collective of any
// team whose members all map an arena passes operands that lie there by
// reference (arena id and offset) and reads and writes them in place: a
// gradient written into its bucket view is already where the peers read
// it, as on the local backend's threads.
//
// The process keeps a registry of the arenas it maps: a team finds there
// whether its operand lies in one every member maps, and where a peer's
// reference points in this process (after checking it lies inside).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_SHAREDARENA_H
#define COLLC_RUNTIME_SHM_SHAREDARENA_H

#include "runtime/exec/HostArena.h"
#include "runtime/shm/SharedSegment.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <mutex>
#include <vector>

namespace collc::rt::shm {

class SharedArena : public HostArena {
public:
  /// Registers \p Seg (every member of \p Pids maps it) under \p Id; this
  /// process takes from [RegionBegin, RegionEnd).
  SharedArena(uint64_t Id, SharedSegment Seg, std::vector<int32_t> Pids, uint64_t RegionBegin,
              uint64_t RegionEnd);
  ~SharedArena() override;
  char *take(uint64_t Bytes, uint64_t Align) override;
  uint64_t id() const { return Id; }

private:
  uint64_t Id;
  SharedSegment Seg;
  std::mutex M;
  uint64_t Next, End;
};

/// An arena as a team sees it.
struct ArenaView {
  uint64_t Id = 0;
  char *Base = nullptr;
  uint64_t Bytes = 0;
};
/// Changes whenever an arena is registered or goes.
uint64_t arenaGeneration();
/// The arenas this process maps that every process of \p Pids maps too.
std::vector<ArenaView> arenasMappedByAll(llvm::ArrayRef<int32_t> Pids);

} // namespace collc::rt::shm

#endif
