//===- runtime/local/LocalServer.cpp - Seed 001 over the local driver ------===//

#include "runtime/local/LocalServer.h"

namespace collc::rt {

template class HostServer<local::LocalDriver>;

} // namespace collc::rt
