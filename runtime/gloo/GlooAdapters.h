//===- runtime/gloo/GlooAdapters.h - The three interfaces on the gloo backend -*- C++ -*-===//
//
// The three interface adapters, instantiated on the gloo driver (one rank per
// process; the process's rendezvous must be configured first,
// runtime/gloo/GlooStore.h): createGlooCommunicator (Communicator),
// GlooSession (DistributedSession) and GlooServer (ServerCommunication). Gloo joins any group by
// name, so every group an interface asks for is built, a server's group of some
// processes only included.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GLOOADAPTERS_H
#define COLLC_RUNTIME_GLOO_GLOOADAPTERS_H

#include "runtime/gloo/GlooDriver.h"
#include "runtime/interfaces/Communicator.h"
#include "runtime/interfaces/EagerComm.h"
#include "runtime/interfaces/HostServer.h"
#include "runtime/interfaces/HostSession.h"

#include <chrono>
#include <memory>

namespace collc::rt {

/// This process's communicator in the group \p GroupName of \p Size
/// processes, as rank \p Rank.
llvm::Expected<std::shared_ptr<Communicator>> createGlooCommunicator(llvm::StringRef GroupName,
                                                                     size_t Size, size_t Rank,
                                                                     CommunicatorOptions Opts = {});

/// GlooSession::create(Name, World, Rank, Timeout).
using GlooSession = HostSession<gloo::GlooDriver>;
extern template class HostSession<gloo::GlooDriver>;

/// GlooServer S(DeviceId): one server per process.
using GlooServer = HostServer<gloo::GlooDriver>;
extern template class HostServer<gloo::GlooDriver>;

/// This process's eager communicator (runtime/interfaces/EagerComm.h) in group
/// \p GroupName, every wait bounded by \p Timeout.
llvm::Expected<std::unique_ptr<EagerComm>> createGlooEagerComm(llvm::StringRef GroupName,
                                                               size_t Size, size_t Rank,
                                                               std::chrono::milliseconds Timeout);

} // namespace collc::rt

#endif
