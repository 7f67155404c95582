//===- runtime/gloo/GlooCommContext.h - The Gloo context under a comm -*- C++ -*-===//
//
// For `collc bench` and tests only: the Gloo context (the TCP pairs) on
// which a gloo executor runs comm #C of its plan, so that Gloo called
// directly runs on the very connections of a replay
// (tools/collc/bench/RawGloo.cpp sets gloo::allreduce beside a replay on
// them, and the two sides then differ only by collc's replay).
//
// The context is the executor's; the caller must:
//  - keep the executor alive while it holds the context (the executor's
//    other state, its streams and the group's failure, goes with it);
//  - call Gloo on it only between replays, on this rank: nothing of the
//    executor in flight here (a replay that succeeded returns with its
//    work done; after a failed one, not at all);
//  - have every member call the same Gloo operations in the same order, as
//    the replays' own collectives are: Gloo's TCP pairs match a send with a
//    recv per (pair, slot) in the order each side posted them. So no barrier
//    is needed between a replay and the call after it, even on the same slot
//    (gloo::allreduce's, tag 0): a rank that finished the replay posts its
//    next sends after every send of the replay, on the same ordered pairs,
//    and a peer still in the replay receives the replay's first; the next
//    ones wait (Gloo holds the notice) until that peer posts their recvs.
//    tests/runtime/GlooCommContextTest.cpp runs both interleaved with the
//    ranks out of step.
// Nothing here marks the group broken when such a call fails: the caller
// stops using the executor then.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GLOOCOMMCONTEXT_H
#define COLLC_RUNTIME_GLOO_GLOOCOMMCONTEXT_H

#include "runtime/exec/Executor.h"

#include <memory>

namespace gloo {
class Context;
} // namespace gloo

namespace collc::rt::gloo {

/// The connected Gloo context on which \p X runs comm #\p Comm of its plan
/// on this rank (a group's context; the world's for a comm of no group).
/// Refuses an executor of another backend, a comm index out of the plan and
/// a comm whose group this rank is not in, naming them.
llvm::Expected<std::shared_ptr<::gloo::Context>> commContext(const Executor &X, uint32_t Comm);

} // namespace collc::rt::gloo

#endif
