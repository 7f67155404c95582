//===- runtime/seeds/EagerComm.cpp - Eager collectives as asynchronous work ===//

#include "runtime/seeds/EagerComm.h"

namespace collc::rt {

EagerComm::~EagerComm() = default;

} // namespace collc::rt
