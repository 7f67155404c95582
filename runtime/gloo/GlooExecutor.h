//===- runtime/gloo/GlooExecutor.h - The executor on the gloo backend -*- C++ -*-===//
#ifndef COLLC_RUNTIME_GLOO_GLOOEXECUTOR_H
#define COLLC_RUNTIME_GLOO_GLOOEXECUTOR_H

#include "runtime/exec/Executor.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

namespace collc::rt {

/// An executor for this process's rank (\p Place) of \p Plan on the gloo
/// backend, meeting the other processes at \p Where (which becomes the
/// process's gloo rendezvous). Refuses a place whose world is not the
/// plan's. The plan must outlive it.
llvm::Expected<std::unique_ptr<Executor>> createGlooExecutor(const plan::Plan &P,
                                                             const ProcessPlace &Place,
                                                             const RendezvousAddress &Where,
                                                             ExecutorOptions Opts = {});

} // namespace collc::rt

#endif
