//===- runtime/local/LocalSession.h - Seed 003 over the local driver -*- C++ -*-===//

#ifndef COLLC_RUNTIME_LOCAL_LOCALSESSION_H
#define COLLC_RUNTIME_LOCAL_LOCALSESSION_H

#include "runtime/local/LocalDriver.h"
#include "runtime/interfaces/HostSession.h"

namespace collc::rt {

/// A session over the local backend: this thread is rank Rank of World
/// (LocalSession::create(Name, World, Rank, Timeout)).
using LocalSession = HostSession<local::LocalDriver>;
extern template class HostSession<local::LocalDriver>;

} // namespace collc::rt

#endif
