//===- runtime/local/Doorbell.h - Spin, then sleep on a futex --------*- C++ -*-===//
//
// How a rank waits for its peers, whether they are threads of this process
// (the local backend) or processes sharing memory (runtime/shm). It polls
// the condition without giving up its core for a short while (a peer
// usually arrives within a microsecond or two); then, unless ranks
// outnumber CPUs, it polls and yields; then it sleeps on a futex: the
// Doorbell, a 32-bit word in the memory the ranks share, which whoever
// makes progress rings. A ring costs one atomic add and a load when nobody
// sleeps, a futex wake when somebody does.
//
// Where ranks outnumber CPUs (8 ranks on 2 cores) a waiter spins a
// microsecond or two and sleeps: one that yields keeps taking back the core
// a peer it waits for needs. (Before this wait, with a yield phase and a
// condition variable, 8 local ranks on 2 cores took 31.8 us at 8 B where
// Open MPI's 8 processes took 18.4 us: issue 32.)
//
// A sleeper wakes at least every SleepSlice to run the caller's interrupt
// check (a broken group, a dead peer: those do not ring), so a bell that a
// hostile peer never rings, or whose words it scribbles over, costs
// latency, never a hang.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LOCAL_DOORBELL_H
#define COLLC_RUNTIME_LOCAL_DOORBELL_H

#include "runtime/exec/Timeout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

namespace collc::rt::local {

struct WaitPolicy {
  std::chrono::milliseconds Timeout = defaultTimeout(); ///< runtime/exec/Timeout.h
  /// Poll without giving up the core this long, then (unless
  /// oversubscribed) poll and yield until YieldSpin, then sleep until rung
  /// (or the deadline). Ranks that outnumber their CPUs spin at most
  /// OversubscribedSpin and do not yield: a peer a waiter waits for may
  /// need this very core.
  std::chrono::microseconds Spin{50};
  std::chrono::microseconds OversubscribedSpin{2};
  std::chrono::microseconds YieldSpin{2000};
};

/// The word sleepers wait on (futex(2) wants 32 bits) and how many sleep.
struct alignas(64) Doorbell {
  std::atomic<uint32_t> Rings{0};
  std::atomic<uint32_t> Sleepers{0};
};
static_assert(std::atomic<uint32_t>::is_always_lock_free, "a futex word is a plain word");

/// Whether the ranks that ring and sleep are threads of this process
/// (FUTEX_PRIVATE_FLAG: cheaper) or processes sharing the bell's memory.
enum class BellScope : bool { ThisProcess, Shared };

/// Wakes every sleeper after the caller's stores before it (a full fence
/// orders them before the sleeper count is read).
void ring(Doorbell &B, BellScope Scope);

/// How a wait ended, when no interrupt ended it.
enum class WaitOutcome { Ready, TimedOut };

/// The longest a sleeper sleeps between two interrupt checks.
constexpr std::chrono::milliseconds SleepSlice{10};

/// Waits until \p Ready, the deadline (Start + W.Timeout), or an error from
/// \p Interrupt, which is called with the time now every few hundred polls
/// and at every wake-up (it should be cheap, or limit its own cost).
llvm::Expected<WaitOutcome> waitAtDoorbell(Doorbell &B, BellScope Scope,
                                           llvm::function_ref<bool()> Ready, const WaitPolicy &W,
                                           bool Oversubscribed,
                                           llvm::function_ref<llvm::Error(
                                               std::chrono::steady_clock::time_point)>
                                               Interrupt);

/// "rank 3" or "ranks 1, 2, ...": the ranks a timed-out wait waited for, as
/// its error names them (at most eight).
std::string lateRanks(llvm::ArrayRef<int32_t> Ranks);

/// Spins one polling step (a pause instruction where there is one).
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

} // namespace collc::rt::local

#endif
