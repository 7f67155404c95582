//===- runtime/gloo/ExternalProbedStore.h - A group's join in the program's store -*- C++ -*-===//
//
// The ProbedStore (ProbedStore.h) of rendezvous store:NAME: the store the
// program registered under NAME (runtime/launch/ExternalStore.h), looked up
// at every call, so a store registered again serves the groups formed
// after. What a join needs beyond set, get and check is built on the
// store's atomic add:
//
// - claim(K, V): the process whose add of "K/collc.claims" returns 1 holds
//   the claim and sets K to V; a later one waits (the group's timeout at
//   most) for K to be set and learns what it holds. A holder that stopped
//   between its add and its set is named as such at the timeout.
// - claimed(K): K's value once it is set; nothing before (never waits).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_EXTERNALPROBEDSTORE_H
#define COLLC_RUNTIME_GLOO_EXTERNALPROBEDSTORE_H

#include "runtime/gloo/ProbedStore.h"

#include <memory>
#include <string>

namespace collc::rt::gloo {

/// The ProbedStore over the store registered as \p Name.
std::shared_ptr<ProbedStore> openExternalProbedStore(const std::string &Name);

} // namespace collc::rt::gloo

#endif
