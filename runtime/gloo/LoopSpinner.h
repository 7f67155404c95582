//===- runtime/gloo/LoopSpinner.h - Gloo's event loop kept awake -*- C++ -*-===//
//
// Gloo's TCP device runs one epoll loop that sleeps up to 10 ms a tick, and
// a pair's destructor waits for the loop's next tick (so that its handler
// is not called after it). A context of N pairs thus took N ticks to go:
// a rank of a 512-process world whose join timed out after 2 s ended after
// 7.3 s, 5.3 s of it tearing down 511 pairs that never connected. While a
// LoopSpinner lives, a descriptor that is always readable keeps the loop
// from sleeping, so each pair goes in a tick of microseconds.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_LOOPSPINNER_H
#define COLLC_RUNTIME_GLOO_LOOPSPINNER_H

#include <gloo/transport/tcp/device.h>
#include <gloo/transport/tcp/loop.h>

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::rt::gloo {

class LoopSpinner final : public ::gloo::transport::tcp::Handler {
public:
  /// Keeps \p Device's loop awake; on a device of another transport, or
  /// without an eventfd, does nothing (the loop ticks as it would).
  explicit LoopSpinner(::gloo::transport::Device &Device);
  ~LoopSpinner() override;
  LoopSpinner(const LoopSpinner &) = delete;
  LoopSpinner &operator=(const LoopSpinner &) = delete;

  /// Called on the loop's thread: reads nothing, so the descriptor stays
  /// readable and the loop comes straight back.
  void handleEvents(int) override {}

private:
  ::gloo::transport::tcp::Device *Tcp = nullptr;
  int Fd = -1;
};

/// \p Context, whose destruction keeps \p Device's loop awake
/// (LoopSpinner) whoever lets go of it last.
template <typename ContextT>
std::shared_ptr<ContextT> withQuickTeardown(ContextT *Context,
                                            std::shared_ptr<::gloo::transport::Device> Device) {
  return std::shared_ptr<ContextT>(Context, [Device = std::move(Device)](ContextT *C) {
    LoopSpinner Awake(*Device);
    delete C;
  });
}

/// A store that forwards to another and, when a call of it fails (a join
/// gives up: a timeout, a refusal), keeps \p Device's loop awake from then
/// on, in \p Awake: the pairs a join made inside Gloo go as the failure
/// unwinds through it, before any caller can let go of them.
class AwakeOnFailure final : public ::gloo::rendezvous::Store {
public:
  AwakeOnFailure(::gloo::rendezvous::Store &Inner, ::gloo::transport::Device &Device,
                 std::optional<LoopSpinner> &Awake)
      : Inner(Inner), Device(Device), Awake(Awake) {}
  void set(const std::string &Key, const std::vector<char> &Data) override {
    forward([&] { Inner.set(Key, Data); });
  }
  std::vector<char> get(const std::string &Key) override {
    std::vector<char> Out;
    forward([&] { Out = Inner.get(Key); });
    return Out;
  }
  void wait(const std::vector<std::string> &Keys) override {
    forward([&] { Inner.wait(Keys); });
  }
  void wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &T) override {
    forward([&] { Inner.wait(Keys, T); });
  }

private:
  template <typename F> void forward(F &&Call) {
    try {
      Call();
    } catch (...) {
      if (!Awake)
        Awake.emplace(Device);
      throw;
    }
  }
  ::gloo::rendezvous::Store &Inner;
  ::gloo::transport::Device &Device;
  std::optional<LoopSpinner> &Awake;
};

} // namespace collc::rt::gloo

#endif
