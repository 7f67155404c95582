//===- runtime/local/Doorbell.cpp - Spin, then sleep on a futex ------------===//

#include "runtime/local/Doorbell.h"

#include <algorithm>
#include <climits>
#include <ctime>
#include <thread>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::local {

namespace {

int futexOp(BellScope Scope, int Op) {
  return Scope == BellScope::ThisProcess ? (Op | FUTEX_PRIVATE_FLAG) : Op;
}

uint32_t *word(Doorbell &B) {
  // std::atomic<uint32_t> is a plain 32-bit word (static_assert in the
  // header), which is what the kernel compares and sleeps on.
  return reinterpret_cast<uint32_t *>(&B.Rings);
}

/// Sleeps while the bell still reads \p Seen, at most \p For. Spurious and
/// early returns (EAGAIN: rung meanwhile; EINTR) are the caller's loop's.
void sleepOn(Doorbell &B, BellScope Scope, uint32_t Seen, std::chrono::nanoseconds For) {
  auto Secs = std::chrono::duration_cast<std::chrono::seconds>(For);
  timespec Relative{time_t(Secs.count()), long((For - Secs).count())};
  syscall(SYS_futex, word(B), futexOp(Scope, FUTEX_WAIT), Seen, &Relative, nullptr, 0);
}

} // namespace

void ring(Doorbell &B, BellScope Scope) {
  // Orders the caller's flag stores before the sleeper count is read; a
  // sleeper counts itself (a full barrier too) before it reads the flags.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (B.Sleepers.load(std::memory_order_relaxed) == 0)
    return;
  B.Rings.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, word(B), futexOp(Scope, FUTEX_WAKE), INT_MAX, nullptr, nullptr, 0);
}

Expected<WaitOutcome> waitAtDoorbell(Doorbell &B, BellScope Scope, function_ref<bool()> Ready,
                                     const WaitPolicy &W, bool Oversubscribed,
                                     function_ref<Error(std::chrono::steady_clock::time_point)>
                                         Interrupt) {
  if (Ready())
    return WaitOutcome::Ready;
  auto Start = std::chrono::steady_clock::now();
  auto Deadline = Start + W.Timeout;
  auto SpinEnd = Start + (Oversubscribed ? std::min(W.Spin, W.OversubscribedSpin) : W.Spin);
  auto YieldEnd = Oversubscribed ? SpinEnd : Start + W.YieldSpin;
  // Spin, then (with a core to spare) poll and yield: a peer that shares
  // this core can run, and one that does not arrives without a wake-up.
  for (unsigned I = 1;; ++I) {
    if (Ready())
      return WaitOutcome::Ready;
    if ((I & 255) == 0) {
      auto Now = std::chrono::steady_clock::now();
      if (Error E = Interrupt(Now))
        return std::move(E);
      if (Now >= YieldEnd)
        break;
      if (Now >= SpinEnd) {
        std::this_thread::yield();
        continue;
      }
    }
    cpuRelax();
  }
  // Sleep: counted first, then the bell read, then the condition, so a
  // ring after the condition was read false always finds this sleeper (or
  // changes the word the kernel compares).
  B.Sleepers.fetch_add(1, std::memory_order_seq_cst);
  Expected<WaitOutcome> Outcome = WaitOutcome::TimedOut;
  while (true) {
    uint32_t Seen = B.Rings.load(std::memory_order_seq_cst);
    if (Ready()) {
      Outcome = WaitOutcome::Ready;
      break;
    }
    auto Now = std::chrono::steady_clock::now();
    if (Error E = Interrupt(Now)) {
      Outcome = std::move(E);
      break;
    }
    if (Now >= Deadline)
      break;
    sleepOn(B, Scope, Seen,
            std::min<std::chrono::nanoseconds>(Deadline - Now, std::chrono::nanoseconds(SleepSlice)));
  }
  B.Sleepers.fetch_sub(1, std::memory_order_seq_cst);
  return Outcome;
}

std::string lateRanks(llvm::ArrayRef<int32_t> Ranks) {
  std::string S = Ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t I = 0; I != Ranks.size() && I < 8; ++I)
    S += (I ? ", " : "") + std::to_string(Ranks[I]);
  if (Ranks.size() > 8)
    S += ", ...";
  return S;
}

} // namespace collc::rt::local
