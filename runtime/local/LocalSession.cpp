//===- runtime/local/LocalSession.cpp - Seed 003 over the local driver -----===//

#include "runtime/local/LocalSession.h"

namespace collc::rt {

template class HostSession<local::LocalDriver>;

} // namespace collc::rt
