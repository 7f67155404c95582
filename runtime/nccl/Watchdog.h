//===- runtime/nccl/Watchdog.h - A deadline for calls that may block -*- C++ -*-===//
//
// The NCCL executor's communicators that carry traffic are blocking (no
// thread per group end: NcclResources.h), and a blocking NCCL call may wait
// on the host for a peer, at a first connection, for as long as the peer
// takes: forever if it died. A watchdog bounds such a call as the
// non-blocking mode's polls would: the executor arms it around the call,
// and past the deadline its thread runs the expiry action once (the
// executor breaks: its graphs, then its communicators, whose abort makes
// the blocked call return). As PyTorch's NCCL watchdog does, on one thread
// per executor that sleeps while nothing is armed.
//
// CUDA-free, so that it is tested on any machine
// (tests/runtime/NcclWatchdogTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_WATCHDOG_H
#define COLLC_RUNTIME_NCCL_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace collc::rt::nccl {

class Watchdog {
public:
  /// \p OnExpiry runs on the watchdog's thread, with what was armed and
  /// the time it was given: "ncclGroupEnd (warm-up) took more than 300 ms".
  explicit Watchdog(std::function<void(const std::string &Why)> OnExpiry);
  /// Stops the thread (an expiry action running is let finish).
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// What a watched call is, for the expiry's message: built only if it
  /// expires (the executor watches every eager NCCL call).
  using Describe = std::function<std::string()>;

  /// Runs \p Body armed for \p What, due in \p Within; returns what it
  /// returns. One at a time (the executor issues from one thread).
  template <typename F> auto watch(Describe What, std::chrono::milliseconds Within, F &&Body) {
    Armed A = arm(std::move(What), Within);
    return Body();
  }

  /// How many times the expiry action ran.
  unsigned expired() const;

private:
  /// Armed from construction to destruction.
  class Armed {
  public:
    explicit Armed(Watchdog &W) : W(W) {}
    ~Armed() { W.disarm(); }
    Armed(const Armed &) = delete;
    Armed &operator=(const Armed &) = delete;

  private:
    Watchdog &W;
  };
  Armed arm(Describe What, std::chrono::milliseconds Within);
  void run();
  void disarm();

  std::function<void(const std::string &)> OnExpiry;
  mutable std::mutex M;
  std::condition_variable Changed;
  bool Stopping = false;
  bool IsArmed = false;
  uint64_t Generation = 0; ///< counts arms: an expiry belongs to one
  Describe What;
  std::chrono::milliseconds Given{0};
  std::chrono::steady_clock::time_point Due;
  unsigned Expired = 0;
  std::thread Thread; ///< last: it starts once the rest is made
};

} // namespace collc::rt::nccl

#endif
