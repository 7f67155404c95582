//===- runtime/exec/HostStream.h - A comm stream on the host --------*- C++ -*-===//
//
// The host backends' CommStream (local, mpi, gloo): a worker thread that runs enqueued
// communication in order, apart from the threads that compute. Like a CUDA
// stream, work runs asynchronously; errors surface when the caller
// synchronizes or waits for a ticket. A thread that waits while the worker
// is idle runs the queue itself (same order, one runner at a time).
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
  explicit HostStream(std::string Name);
  /// Runs what is queued, then stops.
  ~HostStream();
  HostStream(const HostStream &) = delete;
  HostStream &operator=(const HostStream &) = delete;

  /// A callable stored inline (no allocation per enqueue for the driver's
  /// closures), falling back to the heap when it does not fit.
  class Task {
  public:
    Task() = default;
    template <typename F> Task(F &&Fn) {
      using T = std::decay_t<F>;
      if constexpr (sizeof(T) <= sizeof(Storage) && alignof(T) <= alignof(std::max_align_t) &&
                    std::is_trivially_copyable_v<T>) {
        // Plain data (the driver's collectives): moved by copying bytes.
        new (Storage) T(std::forward<F>(Fn));
        Call = [](void *P) { return (*static_cast<T *>(P))(); };
        Trivial = true;
      } else if constexpr (sizeof(T) <= sizeof(Storage) &&
                           alignof(T) <= alignof(std::max_align_t)) {
        new (Storage) T(std::forward<F>(Fn));
        Call = [](void *P) { return (*static_cast<T *>(P))(); };
        Destroy = [](void *P) { static_cast<T *>(P)->~T(); };
        Move = [](void *To, void *From) { new (To) T(std::move(*static_cast<T *>(From))); };
      } else {
        auto *Heap = new T(std::forward<F>(Fn));
        std::memcpy(Storage, &Heap, sizeof(Heap));
        Call = [](void *P) { return (**static_cast<T **>(P))(); };
        Destroy = [](void *P) { delete *static_cast<T **>(P); };
        Move = [](void *To, void *From) { std::memcpy(To, From, sizeof(T *)); };
      }
    }
    Task(Task &&O) noexcept : Call(O.Call), Destroy(O.Destroy), Move(O.Move), Trivial(O.Trivial) {
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
        if (Trivial)
          std::memcpy(Storage, O.Storage, sizeof(Storage));
        else if (Move)
          Move(Storage, O.Storage);
        O.reset();
      }
      return *this;
    }
    ~Task() { reset(); }
    llvm::Error operator()() { return Call(Storage); }

  private:
    void reset() {
      if (Destroy)
        Destroy(Storage);
      Call = nullptr;
      Destroy = nullptr;
      Move = nullptr;
      Trivial = false;
    }
    alignas(std::max_align_t) char Storage[160];
    llvm::Error (*Call)(void *) = nullptr;
    void (*Destroy)(void *) = nullptr;
    void (*Move)(void *, void *) = nullptr;
    bool Trivial = false;
  };
  /// Queues \p T; returns its ticket (1, 2, ...).
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
  void run();
  /// Runs what is queued if nobody else is; false if it did not run any.
  bool drainOnce();
  void runOne(std::pair<uint64_t, Task> &Item);
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
  // reused: no allocation per task).
  std::vector<std::pair<uint64_t, Task>> Queue, Running;
  uint64_t Issued = 0;
  std::atomic<uint64_t> IssuedAtomic{0};
  std::atomic<bool> Executing{false}; ///< the execution token: held while running tasks
  bool WorkerNapping = false;         ///< under M
  bool Kicked = false;                ///< under M: kick() asked for a run
  static constexpr std::chrono::microseconds MinNap{100}, MaxNap{3200};
  std::atomic<uint64_t> Completed{0};
  std::atomic<int> DoneWaiters{0};
  bool Stopping = false;
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
