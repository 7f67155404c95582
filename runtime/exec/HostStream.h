//===- runtime/exec/HostStream.h - A comm stream on the host --------*- C++ -*-===//
//
// The host backends' CommStream (local, mpi, gloo): a worker thread that runs enqueued
// communication in order, apart from the threads that compute. Like a CUDA
// stream, work runs asynchronously; errors surface when the caller
// synchronizes or waits for a ticket. A thread that waits while the worker
// is idle runs the queue itself up to its ticket (same order, one runner
// at a time; a later task may wait on a peer that needs this wait done).
//
// A polled task (one that takes a Poll&) starts nonblocking work and is
// called again until it says it is finished; whoever runs the stream polls
// it, so no thread hand-off sits between its start and its end. One that
// is next in line when enqueued is started at once by the issuing thread
// (Poll::MayBlock false: it must not block there), then progressed by the
// worker or a waiter.
//
// A stream whose worker cannot start (a limit on threads, processes or
// memory: std::thread throws) runs nothing: every wait returns why, and
// what was queued is dropped unrun. Without the worker, work would not
// progress while its caller computes, which a peer may be waiting for.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_HOSTSTREAM_H
#define COLLC_RUNTIME_EXEC_HOSTSTREAM_H

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/FunctionExtras.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace collc::rt {

class HostStream {
public:
  /// Starts the worker; never throws (see above).
  explicit HostStream(std::string Name);
  /// Runs what is queued, then stops.
  ~HostStream();
  HostStream(const HostStream &) = delete;
  HostStream &operator=(const HostStream &) = delete;

  /// What a polled task is told, and tells back.
  struct Poll {
    /// False on the issuing thread: the task must not block (nor copy
    /// much) there; it sets More instead and is called again elsewhere.
    bool MayBlock = true;
    /// Set by the task: not finished, call again (it polls what it started).
    bool More = false;
  };

  /// A callable stored inline (no allocation per enqueue for the driver's
  /// closures), falling back to the heap when it does not fit. Either
  /// Error() (runs to the end) or Error(Poll &) (polled).
  class Task {
  public:
    /// A callable of at most this size is stored inline.
    static constexpr size_t InlineBytes = 256;
    Task() = default;
    template <typename F> Task(F &&Fn) {
      using T = std::decay_t<F>;
      Polled = std::is_invocable_v<T &, Poll &>;
      if constexpr (sizeof(T) <= sizeof(Storage) && alignof(T) <= alignof(std::max_align_t) &&
                    std::is_trivially_copyable_v<T>) {
        // Plain data (the driver's collectives): moved by copying bytes.
        new (Storage) T(std::forward<F>(Fn));
        Call = [](void *P, Poll &Q) { return invoke(*static_cast<T *>(P), Q); };
        Trivial = true;
      } else if constexpr (sizeof(T) <= sizeof(Storage) &&
                           alignof(T) <= alignof(std::max_align_t)) {
        new (Storage) T(std::forward<F>(Fn));
        Call = [](void *P, Poll &Q) { return invoke(*static_cast<T *>(P), Q); };
        Destroy = [](void *P) { static_cast<T *>(P)->~T(); };
        Move = [](void *To, void *From) { new (To) T(std::move(*static_cast<T *>(From))); };
      } else {
        auto *Heap = new T(std::forward<F>(Fn));
        std::memcpy(Storage, &Heap, sizeof(Heap));
        Call = [](void *P, Poll &Q) { return invoke(**static_cast<T **>(P), Q); };
        Destroy = [](void *P) { delete *static_cast<T **>(P); };
        // The moved-from task no longer owns it (its reset deletes null).
        Move = [](void *To, void *From) {
          std::memcpy(To, From, sizeof(T *));
          *static_cast<T **>(From) = nullptr;
        };
      }
    }
    Task(Task &&O) noexcept
        : Call(O.Call), Destroy(O.Destroy), Move(O.Move), Trivial(O.Trivial), Polled(O.Polled) {
      if (Trivial)
        std::memcpy(Storage, O.Storage, sizeof(Storage));
      else if (Move)
        Move(Storage, O.Storage);
      O.reset();
    }
    Task &operator=(Task &&O) noexcept {
      if (this != &O) {
        reset();
        Call = O.Call;
        Destroy = O.Destroy;
        Move = O.Move;
        Trivial = O.Trivial;
        Polled = O.Polled;
        if (Trivial)
          std::memcpy(Storage, O.Storage, sizeof(Storage));
        else if (Move)
          Move(Storage, O.Storage);
        O.reset();
      }
      return *this;
    }
    ~Task() { reset(); }
    llvm::Error operator()(Poll &Q) { return Call(Storage, Q); }
    bool polled() const { return Polled; }
    /// Destroys what it holds: an empty task after.
    void reset() {
      if (Destroy)
        Destroy(Storage);
      Call = nullptr;
      Destroy = nullptr;
      Move = nullptr;
      Trivial = false;
      Polled = false;
    }

  private:
    template <typename T> static llvm::Error invoke(T &Fn, Poll &Q) {
      if constexpr (std::is_invocable_v<T &, Poll &>)
        return Fn(Q);
      else
        return Fn();
    }
    alignas(std::max_align_t) char Storage[InlineBytes];
    llvm::Error (*Call)(void *, Poll &) = nullptr;
    void (*Destroy)(void *) = nullptr;
    void (*Move)(void *, void *) = nullptr;
    bool Trivial = false;
    bool Polled = false;
  };
  /// The pause between two polls of unfinished work: spin first (most small
  /// operations end there), then give the core away (ranks may outnumber
  /// cores), then sleep a little. \p Polls counts the polls so far.
  static void pauseAfterPoll(unsigned Polls);
  static constexpr unsigned TightPolls = 64;
  /// The worker's pause between two polls of a started task that no thread
  /// waits for (its issuer computes meanwhile): a few yields, then sleeps
  /// doubling from MinBackgroundSleep to MaxBackgroundSleep. Never a spin:
  /// the core is the computing thread's (mpirun binds a rank's threads to
  /// one) or another rank's (ranks may outnumber cores), and a sleeper that
  /// wakes gets the core back within its sleep where a yielder waits out
  /// the running thread's time slice. \p Polls counts the polls so far.
  static void pauseInBackground(unsigned Polls);
  static constexpr unsigned BackgroundYields = 8;
  static constexpr std::chrono::microseconds MinBackgroundSleep{2}, MaxBackgroundSleep{64};
  /// Queues \p T; returns its ticket (1, 2, ...). A polled task that is
  /// next in line is started here, on the caller's thread.
  uint64_t enqueue(Task T);
  /// Waits until the task with \p Ticket (and all before it) ran. Returns the
  /// first error of those tasks not reported before.
  llvm::Error waitFor(uint64_t Ticket);
  /// Waits for everything queued so far.
  llvm::Error synchronize();
  /// Starts the worker on what is queued now. Enqueue alone does not wake it
  /// (a waiter usually runs the work itself); call this after enqueueing
  /// work that should progress while the caller does something else.
  void kick();
  /// Whether the task with \p Ticket has run (never blocks).
  bool done(uint64_t Ticket) const { return Completed.load(std::memory_order_acquire) >= Ticket; }
  uint64_t lastTicket() const;
  const std::string &name() const { return Name; }

private:
  enum class Drain {
    Busy,     ///< another thread holds the execution token
    Idle,     ///< nothing to run
    Ran,      ///< ran or finished at least one task
    Pending,  ///< the task in front is started and not finished
  };
  /// The worker thread: its timer slack, then run().
  void workerMain();
  void run();
  /// Runs what is queued, in order, if nobody else is; stops at a polled
  /// task that is not finished (it stays in front).
  /// Runs or polls queued tasks with tickets up to \p UpTo.
  Drain drainOnce(bool MayBlock = true, uint64_t UpTo = UINT64_MAX);
  /// False if the task is not finished (polled, or not to block here).
  bool runOne(std::pair<uint64_t, Task> &Item, bool MayBlock);
  llvm::Error takeError(uint64_t UpTo);

  /// A test-and-test-and-set lock for the queue: held for a few
  /// instructions, rarely contended, cheaper than a mutex on the eager path.
  class SpinLock {
  public:
    void lock() {
      while (Flag.exchange(true, std::memory_order_acquire))
        while (Flag.load(std::memory_order_relaxed))
          relax();
    }
    void unlock() { Flag.store(false, std::memory_order_release); }

  private:
    static void relax() {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    std::atomic<bool> Flag{false};
  };

  std::string Name;
  SpinLock QueueLock;   ///< guards Queue and Issued
  mutable std::mutex M; ///< guards Failures and the condition variables
  std::condition_variable WorkCV, DoneCV;
  // Tasks waiting, and the batch being run (swapped, so their capacity is
  // reused: no allocation per task); Running[Next] is the front, only the
  // holder of the execution token touches Running and Next.
  std::vector<std::pair<uint64_t, Task>> Queue, Running;
  size_t Next = 0;
  uint64_t Issued = 0;
  std::atomic<uint64_t> IssuedAtomic{0};
  std::atomic<bool> Executing{false}; ///< the execution token: held while running tasks
  bool WorkerNapping = false;         ///< under M
  bool Kicked = false;                ///< under M: kick() asked for a run
  static constexpr std::chrono::microseconds MinNap{100}, MaxNap{3200};
  /// How long a waiter yields before it sleeps while another thread runs
  /// the queue: longer than a 2 MiB all_reduce here.
  static constexpr std::chrono::microseconds BusyYield{1000};
  std::atomic<uint64_t> Completed{0};
  std::atomic<int> DoneWaiters{0};
  std::atomic<int> Waiting{0}; ///< threads in waitFor (they run the queue; the worker keeps out)
  std::atomic<uint64_t> Flushed{0}; ///< the last ticket kick() asked to progress (callers' thread)
  bool Stopping = false;
  /// Why the worker did not start ("" when it runs).
  std::string NoWorker;
  // Errors by ticket, reported once.
  struct Failure {
    uint64_t Ticket;
    ErrorKind Kind;
    std::string Message;
    int64_t Peer;
  };
  std::deque<Failure> Failures;
  std::atomic<bool> HasFailures{false}; ///< lets waiters skip the lock
  std::thread Worker;
};

} // namespace collc::rt

#endif
