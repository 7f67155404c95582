//===- runtime/nccl/Watchdog.cpp - A deadline for calls that may block -----===//

#include "runtime/nccl/Watchdog.h"

namespace collc::rt::nccl {

Watchdog::Watchdog(std::function<void(const std::string &)> OnExpiry)
    : OnExpiry(std::move(OnExpiry)), Thread([this] { run(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> Lock(M);
    Stopping = true;
  }
  Changed.notify_all();
  Thread.join();
}

Watchdog::Armed Watchdog::arm(Describe Text, std::chrono::milliseconds Within) {
  {
    std::lock_guard<std::mutex> Lock(M);
    IsArmed = true;
    ++Generation;
    What = std::move(Text);
    Given = Within;
    Due = std::chrono::steady_clock::now() + Within;
  }
  Changed.notify_all();
  return Armed(*this);
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> Lock(M);
  IsArmed = false;
}

unsigned Watchdog::expired() const {
  std::lock_guard<std::mutex> Lock(M);
  return Expired;
}

void Watchdog::run() {
  std::unique_lock<std::mutex> Lock(M);
  while (!Stopping) {
    if (!IsArmed) {
      Changed.wait(Lock);
      continue;
    }
    uint64_t Mine = Generation;
    if (Changed.wait_until(Lock, Due) != std::cv_status::timeout)
      continue; // re-armed, disarmed or stopping: look again
    if (Stopping || !IsArmed || Generation != Mine || std::chrono::steady_clock::now() < Due)
      continue;
    // Expired: once per arm, outside the lock (the action may take long:
    // an abort waits for the device).
    IsArmed = false;
    ++Expired;
    std::string Why = What() + " took more than " + std::to_string(Given.count()) + " ms";
    Lock.unlock();
    OnExpiry(Why);
    Lock.lock();
  }
}

} // namespace collc::rt::nccl
