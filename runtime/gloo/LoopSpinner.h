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
// quickTeardown wraps the process's device so that every transport context
// it makes (a group's pairs) is destroyed under one, whoever lets go of it
// last: a join that fails inside Gloo (a store wait that times out, a peer
// that refuses or closes the connection) as its failure unwinds, a group
// at the end of a run.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_LOOPSPINNER_H
#define COLLC_RUNTIME_GLOO_LOOPSPINNER_H

#include <gloo/transport/device.h>

#include <memory>

namespace gloo::transport::tcp {
class Device;
}

namespace collc::rt::gloo {

class LoopSpinner {
public:
  /// Keeps \p Device's loop awake; on a device of another transport, or
  /// without an eventfd, does nothing (the loop ticks as it would).
  explicit LoopSpinner(::gloo::transport::Device &Device);
  ~LoopSpinner();
  LoopSpinner(const LoopSpinner &) = delete;
  LoopSpinner &operator=(const LoopSpinner &) = delete;

private:
  ::gloo::transport::tcp::Device *Tcp = nullptr;
  int Fd = -1;
};

/// \p Device, whose transport contexts are each destroyed under a
/// LoopSpinner.
std::shared_ptr<::gloo::transport::Device>
quickTeardown(std::shared_ptr<::gloo::transport::Device> Device);

} // namespace collc::rt::gloo

#endif
