//===- runtime/gloo/LoopSpinner.cpp - Gloo's event loop kept awake ---------===//

#include "runtime/gloo/LoopSpinner.h"

#include <gloo/transport/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/tcp/loop.h>

#include <exception>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace collc::rt::gloo {

namespace {

/// What every spinner's descriptor calls, on the loop's thread: nothing but
/// a yield (the loop's thread and the one tearing pairs down may share a
/// core), leaving the descriptor readable so that the loop comes straight
/// back. One that lives for the process: a dispatch that races an
/// unregistration (Gloo's tick wait has no predicate) finds it alive.
struct Yield final : ::gloo::transport::tcp::Handler {
  void handleEvents(int) override { sched_yield(); }
};

::gloo::transport::tcp::Handler &yieldHandler() {
  static auto *H = new Yield;
  return *H;
}

/// A device that makes its contexts through another and destroys each under
/// a LoopSpinner.
class QuickTeardownDevice final : public ::gloo::transport::Device {
public:
  explicit QuickTeardownDevice(std::shared_ptr<::gloo::transport::Device> Inner)
      : Inner(std::move(Inner)) {}
  std::string str() const override { return Inner->str(); }
  const std::string &getPCIBusID() const override { return Inner->getPCIBusID(); }
  int getInterfaceSpeed() const override { return Inner->getInterfaceSpeed(); }
  bool hasGPUDirect() const override { return Inner->hasGPUDirect(); }
  std::shared_ptr<::gloo::transport::Context> createContext(int Rank, int Size) override {
    std::shared_ptr<::gloo::transport::Context> Real = Inner->createContext(Rank, Size);
    ::gloo::transport::Context *Raw = Real.get();
    return std::shared_ptr<::gloo::transport::Context>(
        Raw, [Real = std::move(Real), Inner = Inner](::gloo::transport::Context *) mutable {
          LoopSpinner Awake(*Inner);
          Real.reset();
        });
  }

private:
  std::shared_ptr<::gloo::transport::Device> Inner;
};

} // namespace

LoopSpinner::LoopSpinner(::gloo::transport::Device &Device)
    : Tcp(dynamic_cast<::gloo::transport::tcp::Device *>(&Device)) {
  if (!Tcp)
    return;
  // A counter of 1, never read: readable until it is closed.
  Fd = ::eventfd(1, EFD_NONBLOCK | EFD_CLOEXEC);
  if (Fd < 0)
    return;
  // Gloo enforces the epoll_ctl: a refusal throws, and leaves the loop
  // ticking as it would.
  try {
    Tcp->registerDescriptor(Fd, EPOLLIN, &yieldHandler());
  } catch (const std::exception &) {
    ::close(Fd);
    Fd = -1;
  }
}

LoopSpinner::~LoopSpinner() {
  if (Fd < 0)
    return;
  try {
    Tcp->unregisterDescriptor(Fd, &yieldHandler());
  } catch (const std::exception &) {
    // The descriptor may still be in a batch the loop dispatches: its
    // handler lives on regardless.
  }
  ::close(Fd);
}

std::shared_ptr<::gloo::transport::Device>
quickTeardown(std::shared_ptr<::gloo::transport::Device> Device) {
  return std::make_shared<QuickTeardownDevice>(std::move(Device));
}

} // namespace collc::rt::gloo
