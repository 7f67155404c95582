//===- runtime/exec/Executor.cpp - The executor interface ------------------===//

#include "runtime/exec/Executor.h"

namespace collc::rt {

Executor::~Executor() = default;

} // namespace collc::rt
