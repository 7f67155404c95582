//===- runtime/interfaces/EagerComm.cpp - Eager collectives as asynchronous work ===//

#include "runtime/interfaces/EagerComm.h"

namespace collc::rt {

EagerComm::~EagerComm() = default;

} // namespace collc::rt
