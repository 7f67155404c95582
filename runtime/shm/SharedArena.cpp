//===- runtime/shm/SharedArena.cpp - Executor memory the host's processes share ===//

#include "runtime/shm/SharedArena.h"

#include "llvm/ADT/STLExtras.h"

#include <atomic>
#include <cstring>

namespace collc::rt::shm {

namespace {

struct Registered {
  ArenaView View;
  std::vector<int32_t> Pids;
};

struct Registry {
  std::mutex M;
  std::vector<Registered> Arenas;
  std::atomic<uint64_t> Generation{0};
};

Registry &registry() {
  static Registry R;
  return R;
}

} // namespace

SharedArena::SharedArena(uint64_t Id, SharedSegment S, std::vector<int32_t> Pids,
                         uint64_t RegionBegin, uint64_t RegionEnd)
    : Id(Id), Seg(std::move(S)), Next(RegionBegin), End(RegionEnd) {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  R.Arenas.push_back({{Id, Seg.data(), Seg.size()}, std::move(Pids)});
  R.Generation.fetch_add(1, std::memory_order_release);
}

SharedArena::~SharedArena() {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  llvm::erase_if(R.Arenas, [&](const Registered &A) { return A.View.Id == Id; });
  R.Generation.fetch_add(1, std::memory_order_release);
}

char *SharedArena::take(uint64_t Bytes, uint64_t Align) {
  std::lock_guard<std::mutex> L(M);
  uint64_t At = (Next + Align - 1) / Align * Align;
  if (At < Next || At > End || Bytes > End - At)
    return nullptr;
  Next = At + Bytes;
  char *P = Seg.data() + At;
  // Zeroed, so that its pages are in place before the first step (a
  // segment is zero already; writing faults the pages in).
  std::memset(P, 0, Bytes);
  return P;
}

uint64_t arenaGeneration() { return registry().Generation.load(std::memory_order_acquire); }

std::vector<ArenaView> arenasMappedByAll(llvm::ArrayRef<int32_t> Pids) {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  std::vector<ArenaView> Out;
  for (const Registered &A : R.Arenas)
    if (llvm::all_of(Pids, [&](int32_t P) { return llvm::is_contained(A.Pids, P); }))
      Out.push_back(A.View);
  return Out;
}

} // namespace collc::rt::shm
