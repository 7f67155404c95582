//===- api/BackendSessions.h - What process backends keep alive -*- C++ -*-===//
//
// The C API starts what a process backend needs (MPI's initialization, as
// runtime/process/ProcessBackends.h startProcessBackend does it) at the
// first executor of that backend, not at load: a C or Python caller of the
// local or gloo backend never touches MPI. Each executor holds a reference;
// collcFinalize ends the sessions once none is held (MPI is finalized there
// if collc initialized it; an MPI the program initialized stays its own),
// and a session still started at exit ends with the library's statics.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_API_BACKENDSESSIONS_H
#define COLLC_API_BACKENDSESSIONS_H

#include "runtime/launch/RendezvousAddress.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace collc::api {

/// The session of \p Backend, started on first use; an executor of the
/// backend holds it until destroyed.
llvm::Expected<std::shared_ptr<void>> holdBackendSession(llvm::StringRef Backend);

/// What an executor or a communicator of process backend \p Backend needs
/// before it meets its peers, checked in one place: the backend known and
/// built, \p Rendezvous (given as options->rendezvous; empty: the backend's
/// default) parsed and fit for it, and its session started into \p Session.
/// Returns where the peers meet.
llvm::Expected<rt::RendezvousAddress> prepareProcessBackend(llvm::StringRef Backend,
                                                            llvm::StringRef Rendezvous,
                                                            std::shared_ptr<void> &Session);

/// Ends every started session; refused (collcInvalidUsage), ending none,
/// while an executor still holds one.
llvm::Error endBackendSessions();

} // namespace collc::api

#endif
