//===- runtime/gloo/GlooShmDriver.h - The gloo backend with shared memory -*- C++ -*-===//
//
// What the gloo backend's executor runs on: each group's bytes in shared
// memory where its processes share a host, hierarchically where it spans
// hosts, through Gloo elsewhere (runtime/shm/ShmDriver.h).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GLOOSHMDRIVER_H
#define COLLC_RUNTIME_GLOO_GLOOSHMDRIVER_H

#include "runtime/gloo/GlooDriver.h"
#include "runtime/shm/ShmDriver.h"

namespace collc::rt::gloo {

using GlooShmDriver = shm::ShmDriver<GlooDriver>;
static_assert(ExecutorDriver<GlooShmDriver>);

} // namespace collc::rt::gloo

#endif
