//===- runtime/exec/CoarseClock.cpp - The flight record's clock: one load ==//

#include "runtime/exec/CoarseClock.h"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace collc::rt {

std::atomic<int64_t> detail::CoarseUnixNs{0};

int64_t unixNowNs() {
  return int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count());
}

namespace {

/// The ticking thread and how many uses hold it. Never destroyed: a use
/// may end during static destruction. Each thread ticks while the
/// generation it was started in lasts: the last use ends it, and a use
/// that comes while the old thread is still on its way out starts another.
struct Ticker {
  std::mutex Lock;
  std::condition_variable Stop;
  unsigned Uses = 0;
  uint64_t Generation = 0;
  std::thread Thread;
};

Ticker &ticker() {
  static Ticker *T = new Ticker;
  return *T;
}

void tickLoop(Ticker &T, uint64_t Generation) {
  std::unique_lock<std::mutex> L(T.Lock);
  while (T.Generation == Generation) {
    detail::CoarseUnixNs.store(unixNowNs(), std::memory_order_relaxed);
    T.Stop.wait_for(L, CoarseClockUse::Tick);
  }
}

} // namespace

CoarseClockUse::CoarseClockUse() {
  Ticker &T = ticker();
  std::lock_guard<std::mutex> L(T.Lock);
  if (T.Uses++)
    return;
  // The first stamp is right before the thread's first tick.
  detail::CoarseUnixNs.store(unixNowNs(), std::memory_order_relaxed);
  try {
    T.Thread = std::thread(tickLoop, std::ref(T), ++T.Generation);
  } catch (...) {
    --T.Uses; // no thread: the next use tries again
    throw;
  }
}

CoarseClockUse::~CoarseClockUse() {
  Ticker &T = ticker();
  std::thread Ending;
  {
    std::lock_guard<std::mutex> L(T.Lock);
    if (--T.Uses)
      return;
    ++T.Generation;
    Ending = std::move(T.Thread);
    T.Stop.notify_all();
  }
  Ending.join(); // outside the lock, which the thread takes to leave
}

} // namespace collc::rt
