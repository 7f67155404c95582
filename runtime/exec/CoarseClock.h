//===- runtime/exec/CoarseClock.h - The flight record's clock: one load -*- C++ -*-===//
//
// The flight record stamps every comm event and is on by default, so a
// stamp must cost next to nothing. Measured on the CI machine (a VM):
// clock_gettime 90 ns, the x86 time-stamp counter 39 ns, while a replay
// of one 8-byte all_reduce on two local ranks takes about 250 ns a step;
// a stamp of either kind per event would cost that step several percent.
// So the record reads a clock that a thread keeps: every millisecond it
// stores the time of day in one word, and a stamp is a load of that word
// (the line stays in every core's cache between ticks). Stamps are good to
// about a millisecond, plenty to order the events of a hang measured in
// seconds (PyTorch's Flight Recorder stamps an op's start and end when its
// watchdog notices them, which is coarser still).
//
// The thread runs while a CoarseClockUse lives (each flight record that is
// on holds one) and stops with the last.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_COARSECLOCK_H
#define COLLC_RUNTIME_EXEC_COARSECLOCK_H

#include <atomic>
#include <chrono>
#include <cstdint>

namespace collc::rt {

namespace detail {
extern std::atomic<int64_t> CoarseUnixNs;
}

/// Nanoseconds since the Unix epoch, as of the clock thread's last tick
/// (0 while no CoarseClockUse lives).
inline int64_t coarseNowNs() { return detail::CoarseUnixNs.load(std::memory_order_relaxed); }

/// The system clock now, in the same unit.
int64_t unixNowNs();

/// While one lives, the clock thread ticks (CoarseClockTick apart).
class CoarseClockUse {
public:
  static constexpr std::chrono::milliseconds Tick{1};
  CoarseClockUse();
  ~CoarseClockUse();
  CoarseClockUse(const CoarseClockUse &) = delete;
  CoarseClockUse &operator=(const CoarseClockUse &) = delete;
};

} // namespace collc::rt

#endif
