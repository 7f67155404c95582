//===- runtime/mpi/AbandonedMemory.cpp - What giving up on MPI leaves behind -===//

#include "runtime/mpi/AbandonedMemory.h"

#include "runtime/exec/Timeout.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace collc::rt::mpi {

namespace {
std::atomic<int64_t> LongestWaitMs{0};
} // namespace

void keepForAbandonedRequest(std::shared_ptr<void> Memory) {
  static std::mutex M;
  // Never destroyed: static destructors run after MPI_Finalize, or while
  // another thread still waits.
  static auto *Kept = new std::vector<std::shared_ptr<void>>();
  std::lock_guard<std::mutex> L(M);
  Kept->push_back(std::move(Memory));
}

void noteMpiWait(std::chrono::milliseconds Timeout) {
  int64_t Was = LongestWaitMs.load();
  while (Was < Timeout.count() && !LongestWaitMs.compare_exchange_weak(Was, Timeout.count())) {
  }
}

std::chrono::milliseconds farewellWithin() {
  int64_t Ms = LongestWaitMs.load();
  return Ms > 0 ? std::chrono::milliseconds(Ms) : defaultTimeout();
}

} // namespace collc::rt::mpi
