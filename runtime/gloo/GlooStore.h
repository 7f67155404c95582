//===- runtime/gloo/GlooStore.h - Where the processes of a gloo run meet -*- C++ -*-===//
//
// The process-wide rendezvous of the gloo backend, set once from the run's
// address (runtime/launch/RendezvousAddress.h): Gloo's FileStore on a
// shared directory (file:DIR) or its RedisStore (redis://HOST:PORT), able to
// say without waiting whether keys are set (ProbedStore.h). Every group the
// process joins meets in it under the group's name (GroupStore.h).
//
// The TCP device every group shares listens on COLLC_GLOO_HOSTNAME when set;
// otherwise on 127.0.0.1 when the rendezvous is a directory, a Redis
// server on this host or a store the program says is this host's alone
// (one host), and on this host's name when the Redis server is elsewhere
// or the program's store spans hosts (peers must reach us by that name).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GLOOSTORE_H
#define COLLC_RUNTIME_GLOO_GLOOSTORE_H

#include "runtime/launch/RendezvousAddress.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace gloo::transport {
class Device;
} // namespace gloo::transport

namespace collc::rt::gloo {

class ProbedStore;

/// Sets this process's rendezvous. Again with the same address: nothing;
/// with another one: an error naming both. `mpi` is refused (the gloo
/// backend meets through a store), and so is a store:NAME that no store
/// is registered as.
llvm::Error configureRendezvous(const RendezvousAddress &Where);

/// The configured store (connecting to Redis on first use), or an error
/// saying that configureRendezvous was not called.
llvm::Expected<std::shared_ptr<ProbedStore>> processStore();

/// The TCP device of this process, created on first use. It sets SIGPIPE
/// to be ignored when it has no handler (a dead peer must fail an
/// operation, not kill the process), and makes a Gloo exception that
/// escapes the device's loop thread end the process with status 1
/// (LoopFailureExit.h).
llvm::Expected<std::shared_ptr<::gloo::transport::Device>> processDevice();

/// The name the device listens on (see above).
std::string deviceHostname(const RendezvousAddress &Where);

} // namespace collc::rt::gloo

#endif
