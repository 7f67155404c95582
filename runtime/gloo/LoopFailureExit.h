//===- runtime/gloo/LoopFailureExit.h - Gloo's loop thread fails as a rank -*- C++ -*-===//
//
// Gloo's TCP device runs its event loop on a thread of its own, and what
// that loop throws escapes it: std::terminate, SIGABRT. It throws when a
// connection was reset before the loop accepted it (Gloo enforces
// getpeername there): a peer that ended, or that gave up a join and reset
// the pair whose connect waited (WatchedMesh.cpp), while this process had
// not yet accepted. Nothing of collc's can catch that throw, so the
// process ends the way a failed rank does instead: the reason on stderr,
// status 1 (docs/cli.md's "a run failed"), not a signal death that reads
// as a crash. Any other uncaught exception still goes to the handler that
// was there before (a crash is a crash).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_LOOPFAILUREEXIT_H
#define COLLC_RUNTIME_GLOO_LOOPFAILUREEXIT_H

namespace collc::rt::gloo {

/// Installs, once per process, a std::terminate handler that ends the
/// process with status 1 and the exception's text when the exception is
/// Gloo's (gloo::Exception, gloo::EnforceNotMet); other terminations go
/// on to the previous handler. Called where the device, and so its loop
/// thread, is made.
void endProcessOnGlooLoopFailure();

} // namespace collc::rt::gloo

#endif
