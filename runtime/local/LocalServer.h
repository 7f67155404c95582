//===- runtime/local/LocalServer.h - Seed 001 over the local driver -*- C++ -*-===//

#ifndef COLLC_RUNTIME_LOCAL_LOCALSERVER_H
#define COLLC_RUNTIME_LOCAL_LOCALSERVER_H

#include "runtime/local/LocalDriver.h"
#include "runtime/interfaces/HostServer.h"

namespace collc::rt {

/// A server whose device is a thread of this process (the local backend):
/// LocalServer S(DeviceId).
using LocalServer = HostServer<local::LocalDriver>;
extern template class HostServer<local::LocalDriver>;

} // namespace collc::rt

#endif
