//===- runtime/gloo/LoopSpinner.cpp - Gloo's event loop kept awake ---------===//

#include "runtime/gloo/LoopSpinner.h"

#include <exception>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace collc::rt::gloo {

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
    Tcp->registerDescriptor(Fd, EPOLLIN, this);
  } catch (const std::exception &) {
    ::close(Fd);
    Fd = -1;
  }
}

LoopSpinner::~LoopSpinner() {
  if (Fd < 0)
    return;
  try {
    Tcp->unregisterDescriptor(Fd, this);
  } catch (const std::exception &) {
    // Not registered any more: nothing calls this handler.
  }
  ::close(Fd);
}

} // namespace collc::rt::gloo
