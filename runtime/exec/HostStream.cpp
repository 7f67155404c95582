//===- runtime/exec/HostStream.cpp - A comm stream on the host ----------------===//
//
// Tasks run in order, one at a time, by whoever holds the execution token:
// the worker thread normally, or a thread that waits for a ticket while the
// worker is idle. Running the queue on the waiting thread removes two
// thread hand-offs from every blocking operation (the eager path), which on
// a small machine cost more than the collective itself; asynchronous work
// still progresses on the worker. A polled task gives the token back
// between its polls, so the worker and a waiter can take turns on it; its
// start needs no other thread at all (enqueue).
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/HostStream.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <sched.h>
#include <system_error>
#include <sys/prctl.h>

using namespace llvm;

namespace collc::rt {

static void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

HostStream::HostStream(std::string N) : Name(std::move(N)) {
  try {
    Worker = std::thread([this] { workerMain(); });
  } catch (const std::system_error &E) {
    NoWorker = formatv("comm stream '{0}' cannot start its thread: {1} (a limit on threads, "
                       "processes or memory)",
                       Name, E.what())
                   .str();
  }
}

void HostStream::workerMain() {
  // The worker's sleeps between polls (pauseInBackground) are a few
  // microseconds: Linux's default timer slack (50 us) would stretch each.
  // The 1 us slack holds for the worker's whole life, so it also covers
  // its naps and the blocking tasks it runs: their timed waits and sleeps
  // end within 1 us of their deadline instead of up to 50 us after it
  // (at the cost of wake-ups the kernel cannot coalesce). Not restored at
  // the end: the slack is this thread's, which ends with the stream.
  if (prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0) != 0) {
    // Refused (a seccomp filter, say): the worker keeps the slack it
    // inherited, so its sleeps are as coarse as any thread's. That costs
    // a started task up to the slack in latency per poll and changes no
    // result, so the stream runs on; nor is there anyone to tell: no
    // operation is under way to carry an error, and a library does not
    // print.
  }
  run();
}

HostStream::~HostStream() {
  if (!NoWorker.empty())
    return; // nothing ran, nothing is to run: the queue goes unrun
  {
    std::lock_guard<std::mutex> L(M);
    Stopping = true;
  }
  WorkCV.notify_all();
  Worker.join();
  // Run what is left, as a stream does before it is destroyed.
  for (unsigned Polls = 0; Completed.load(std::memory_order_acquire) != lastTicket();)
    pauseAfterPoll(drainOnce() == Drain::Pending ? Polls++ : (Polls = 0));
}

uint64_t HostStream::enqueue(Task T) {
  // No wake-up here (see run()): the worker naps; waiters and kick() start
  // the work.
  bool Polled = T.polled() && NoWorker.empty();
  uint64_t Ticket;
  {
    std::lock_guard<SpinLock> L(QueueLock);
    Ticket = ++Issued;
    Queue.emplace_back(Ticket, std::move(T));
    IssuedAtomic.store(Ticket, std::memory_order_release);
  }
  // Next in line: the caller starts it (it only issues nonblocking work
  // here), so its start waits for no wake-up of another thread.
  if (Polled && Completed.load(std::memory_order_acquire) == Ticket - 1)
    drainOnce(/*MayBlock=*/false);
  return Ticket;
}

void HostStream::kick() {
  uint64_t Last = lastTicket();
  if (Completed.load(std::memory_order_acquire) == Last)
    return; // nothing queued
  if (Flushed.load(std::memory_order_relaxed) < Last)
    Flushed.store(Last, std::memory_order_relaxed);
  std::lock_guard<std::mutex> L(M);
  Kicked = true;
  if (WorkerNapping)
    WorkCV.notify_one();
}

uint64_t HostStream::lastTicket() const { return IssuedAtomic.load(std::memory_order_acquire); }

void HostStream::pauseAfterPoll(unsigned Polls) {
  if (Polls < TightPolls)
    return; // the latency path: most small operations end here
  if (Polls < 4096)
    sched_yield(); // ranks may outnumber cores: give it back
  else
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

void HostStream::pauseInBackground(unsigned Polls) {
  if (Polls < BackgroundYields) {
    sched_yield();
    return;
  }
  unsigned Doublings = std::min(Polls - BackgroundYields, 16u);
  std::this_thread::sleep_for(
      std::min(MinBackgroundSleep * (1u << Doublings), MaxBackgroundSleep));
}

HostStream::Drain HostStream::drainOnce(bool MayBlock, uint64_t UpTo) {
  // The execution token: one locked exchange to take it, a plain store to
  // give it back (cheaper than a mutex on the eager path).
  if (Executing.load(std::memory_order_relaxed) ||
      Executing.exchange(true, std::memory_order_acquire))
    return Drain::Busy;
  if (Next == Running.size()) {
    Running.clear();
    Next = 0;
    std::lock_guard<SpinLock> L(QueueLock);
    Running.swap(Queue);
  }
  bool Finished = false;
  for (; Next != Running.size() && Running[Next].first <= UpTo; ++Next, Finished = true)
    if (!runOne(Running[Next], MayBlock))
      break;
  Drain Result = Finished                                                 ? Drain::Ran
                 : Next != Running.size() && Running[Next].first <= UpTo ? Drain::Pending
                                                                          : Drain::Idle;
  Executing.store(false, std::memory_order_release);
  return Result;
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
  // A started polled task is polled here until it finishes, which makes it
  // progress while the issuing thread computes; but not while a thread
  // waits for the stream: that one polls (a second poller on its core only
  // delays it), and kicks the worker when it leaves work behind.
  auto Nap = MinNap;
  unsigned Polls = 0;
  while (true) {
    if (Completed.load(std::memory_order_acquire) != lastTicket() &&
        Waiting.load(std::memory_order_acquire) == 0) {
      Drain D = drainOnce();
      if (D == Drain::Ran || D == Drain::Pending) {
        // Gives the core back after every poll: it is the computing
        // thread's core too (mpirun binds a rank's threads to one).
        if (D == Drain::Pending)
          pauseInBackground(Polls++);
        else
          Polls = 0;
        Nap = MinNap;
        continue;
      }
    }
    Polls = 0;
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

bool HostStream::runOne(std::pair<uint64_t, Task> &Item, bool MayBlock) {
  if (!MayBlock && !Item.second.polled())
    return false;
  Poll Q;
  Q.MayBlock = MayBlock;
  Error E = Item.second(Q);
  if (!E && Q.More)
    return false;
  if (E) {
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
  // What the task holds goes before anyone sees it done (not at the next
  // batch): after a wait, no finished task still holds a request or scratch.
  Item.second.reset();
  Completed.store(Item.first, std::memory_order_seq_cst);
  if (DoneWaiters.load(std::memory_order_seq_cst) > 0) {
    std::lock_guard<std::mutex> L(M);
    DoneCV.notify_all();
  }
  return true;
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
  if (!NoWorker.empty())
    return makeError(ErrorKind::Backend, NoWorker);
  if (done(Ticket))
    return takeError(Ticket);
  Waiting.fetch_add(1, std::memory_order_acq_rel);
  unsigned Polls = 0;
  while (!done(Ticket)) {
    // Run (or poll) the queue here, up to this ticket, if no other thread
    // is doing it. Not past it: a later task may block until a peer does
    // what it will do only after this wait returns (a second async send to
    // a peer that first sends back).
    Drain D = drainOnce(/*MayBlock=*/true, Ticket);
    if (D == Drain::Ran || D == Drain::Pending) {
      pauseAfterPoll(D == Drain::Ran ? (Polls = 0) : Polls++);
      continue;
    }
    // Another thread runs it (the worker, in a call that blocks, or between
    // two polls: it keeps out once it sees us, so retry as soon as the token
    // is free): yield for a while rather than sleep, since that thread may
    // share this core (mpirun binds a rank's threads to one) and a sleeper
    // needs a wake-up (tens of us here) once it is done.
    auto SpinUntil = std::chrono::steady_clock::now() + BusyYield;
    bool Free = false;
    for (unsigned I = 1; !done(Ticket) && !(Free = !Executing.load(std::memory_order_acquire));
         ++I) {
      if ((I & 63) == 0) {
        if (std::chrono::steady_clock::now() >= SpinUntil)
          break;
        sched_yield();
      }
      cpuRelax();
    }
    if (done(Ticket))
      break;
    if (Free && D == Drain::Busy)
      continue;
    DoneWaiters.fetch_add(1, std::memory_order_seq_cst);
    {
      std::unique_lock<std::mutex> L(M);
      DoneCV.wait_for(L, std::chrono::milliseconds(5), [&] { return done(Ticket); });
    }
    DoneWaiters.fetch_sub(1, std::memory_order_seq_cst);
  }
  // Work kicked before and left behind (after this ticket) goes on
  // without us: the worker kept out while we waited.
  if (Waiting.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
      Flushed.load(std::memory_order_relaxed) > Completed.load(std::memory_order_acquire))
    kick();
  return takeError(Ticket);
}

Error HostStream::synchronize() { return waitFor(lastTicket()); }

} // namespace collc::rt
