//===- runtime/gloo/GlooExecutor.cpp - The executor on the gloo backend ----===//

#include "runtime/gloo/GlooExecutor.h"

#include "runtime/exec/DriverExecutor.h"
#include "runtime/gloo/GlooShmDriver.h"
#include "runtime/gloo/GlooStore.h"


using namespace llvm;

namespace collc::rt {

Expected<std::unique_ptr<Executor>> createGlooExecutor(const plan::Plan &P,
                                                       const ProcessPlace &Place,
                                                       const RendezvousAddress &Where,
                                                       ExecutorOptions Opts) {
  if (Error E = checkPlanWorld(P.Program, P.World, Place))
    return E;
  if (Error E = gloo::configureRendezvous(Where))
    return E;
  // Each group's bytes in shared memory where its processes share a host
  // (runtime/shm), through Gloo elsewhere.
  return startDriverExecutor<gloo::GlooShmDriver>(P, Place.Rank, std::move(Opts));
}

} // namespace collc::rt
