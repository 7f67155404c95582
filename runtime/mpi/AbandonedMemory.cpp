//===- runtime/mpi/AbandonedMemory.cpp - What giving up on MPI leaves behind -===//

#include "runtime/mpi/AbandonedMemory.h"

#include "runtime/exec/Timeout.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace collc::rt::mpi {

namespace {
std::atomic<bool> GaveUp{false};
std::atomic<int64_t> LongestWaitMs{0};
} // namespace

void keepForAbandonedRequest(std::shared_ptr<void> Memory) {
  noteGaveUpOnMpi();
  static std::mutex M;
  // Never destroyed: static destructors run after MPI_Finalize, or while
  // another thread still waits.
  static auto *Kept = new std::vector<std::shared_ptr<void>>();
  std::lock_guard<std::mutex> L(M);
  Kept->push_back(std::move(Memory));
}

void noteGaveUpOnMpi() { GaveUp.store(true, std::memory_order_release); }

void noteGaveUpOnMpi(std::chrono::milliseconds Waited) {
  int64_t Was = LongestWaitMs.load();
  while (Was < Waited.count() && !LongestWaitMs.compare_exchange_weak(Was, Waited.count())) {
  }
  noteGaveUpOnMpi();
}

std::chrono::milliseconds farewellWithin() {
  int64_t Ms = LongestWaitMs.load();
  return Ms > 0 ? std::chrono::milliseconds(Ms) : defaultTimeout();
}

bool gaveUpOnMpi() { return GaveUp.load(std::memory_order_acquire); }

} // namespace collc::rt::mpi
