//===- runtime/mpi/AbandonedMemory.cpp - Memory a given-up request may write -===//

#include "runtime/mpi/AbandonedMemory.h"

#include <mutex>
#include <vector>

namespace collc::rt::mpi {

void keepForAbandonedRequest(std::shared_ptr<void> Memory) {
  static std::mutex M;
  // Never destroyed: static destructors run after MPI_Finalize, or while
  // another thread still waits.
  static auto *Kept = new std::vector<std::shared_ptr<void>>();
  std::lock_guard<std::mutex> L(M);
  Kept->push_back(std::move(Memory));
}

} // namespace collc::rt::mpi
