//===- runtime/exec/HostStream.cpp - A comm stream on the host ----------------===//
//
// Tasks run in order, one at a time, by whoever holds the execution token:
// the worker thread normally, or a thread that waits for a ticket while the
// worker is idle. Running the queue on the waiting thread removes two
// thread hand-offs from every blocking operation (the eager path), which on
// a small machine cost more than the collective itself; asynchronous work
// still progresses on the worker.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/HostStream.h"

#include <chrono>

using namespace llvm;

namespace collc::rt {

static void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

HostStream::HostStream(std::string N) : Name(std::move(N)) {
  Worker = std::thread([this] { run(); });
}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> L(M);
    Stopping = true;
  }
  WorkCV.notify_all();
  Worker.join();
  // Run what is left, as a stream does before it is destroyed.
  while (drainOnce())
    ;
}

uint64_t HostStream::enqueue(Task T) {
  // No wake-up here (see run()): the worker naps; waiters and kick() start
  // the work.
  std::lock_guard<SpinLock> L(QueueLock);
  uint64_t Ticket = ++Issued;
  Queue.emplace_back(Ticket, std::move(T));
  IssuedAtomic.store(Ticket, std::memory_order_release);
  return Ticket;
}

void HostStream::kick() {
  if (Completed.load(std::memory_order_acquire) == lastTicket())
    return; // nothing queued
  std::lock_guard<std::mutex> L(M);
  Kicked = true;
  if (WorkerNapping)
    WorkCV.notify_one();
}

uint64_t HostStream::lastTicket() const { return IssuedAtomic.load(std::memory_order_acquire); }

bool HostStream::drainOnce() {
  // The execution token: one locked exchange to take it, a plain store to
  // give it back (cheaper than a mutex on the eager path).
  if (Executing.load(std::memory_order_relaxed) ||
      Executing.exchange(true, std::memory_order_acquire))
    return false;
  {
    std::lock_guard<SpinLock> L(QueueLock);
    Running.swap(Queue);
  }
  bool Ran = !Running.empty();
  for (auto &Item : Running)
    runOne(Item);
  Running.clear();
  Executing.store(false, std::memory_order_release);
  return Ran;
}

void HostStream::run() {
  // Idle, the worker naps in timed waits rather than being woken by every
  // enqueue: a thread that enqueues a task and then waits runs it itself (no
  // wake-up system call, no second thread competing for its core). Naps
  // lengthen while waiters keep up with the queue (it is empty, or one of
  // them holds the execution token) and shorten when the worker finds work,
  // so work nobody waits for still starts within a nap (at most MaxNap);
  // kick() starts it at once. The worker never polls a queue that a waiter
  // is draining: on a small machine that would take the core from a rank.
  auto Nap = MinNap;
  while (true) {
    if (Completed.load(std::memory_order_acquire) != lastTicket() && drainOnce()) {
      Nap = MinNap;
      continue;
    }
    std::unique_lock<std::mutex> L(M);
    if (Stopping)
      return;
    if (Kicked) {
      Kicked = false;
      continue;
    }
    WorkerNapping = true;
    WorkCV.wait_for(L, Nap, [&] { return Kicked || Stopping; });
    WorkerNapping = false;
    if (!Kicked)
      Nap = std::min(Nap * 2, MaxNap);
  }
}

void HostStream::runOne(std::pair<uint64_t, Task> &Item) {
  if (Error E = Item.second()) {
    Failure F{Item.first, ErrorKind::Backend, "", -1};
    handleAllErrors(
        std::move(E),
        [&](const RuntimeError &R) {
          F.Kind = R.kind();
          F.Message = R.text();
          F.Peer = R.peer();
        },
        [&](const ErrorInfoBase &B) { F.Message = B.message(); });
    std::lock_guard<std::mutex> L(M);
    Failures.push_back(std::move(F));
    HasFailures.store(true, std::memory_order_release);
  }
  Completed.store(Item.first, std::memory_order_seq_cst);
  if (DoneWaiters.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> L(M);
    DoneCV.notify_all();
  }
}

Error HostStream::takeError(uint64_t UpTo) {
  if (!HasFailures.load(std::memory_order_acquire))
    return Error::success();
  std::lock_guard<std::mutex> L(M);
  if (Failures.empty() || Failures.front().Ticket > UpTo)
    return Error::success();
  // The first failure is the cause; later ones are usually its echoes.
  Failure First = Failures.front();
  while (!Failures.empty() && Failures.front().Ticket <= UpTo)
    Failures.pop_front();
  HasFailures.store(!Failures.empty(), std::memory_order_release);
  return makeError(First.Kind, First.Message, First.Peer);
}

Error HostStream::waitFor(uint64_t Ticket) {
  while (!done(Ticket)) {
    // Run the queue here if the worker is not already doing it.
    if (drainOnce())
      continue;
    auto SpinUntil = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    for (unsigned I = 1; !done(Ticket); ++I) {
      if ((I & 255) == 0 && std::chrono::steady_clock::now() >= SpinUntil)
        break;
      cpuRelax();
    }
    if (done(Ticket))
      break;
    DoneWaiters.fetch_add(1, std::memory_order_seq_cst);
    {
      std::unique_lock<std::mutex> L(M);
      DoneCV.wait_for(L, std::chrono::milliseconds(5), [&] { return done(Ticket); });
    }
    DoneWaiters.fetch_sub(1, std::memory_order_seq_cst);
  }
  return takeError(Ticket);
}

Error HostStream::synchronize() { return waitFor(lastTicket()); }

} // namespace collc::rt
