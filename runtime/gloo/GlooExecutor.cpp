//===- runtime/gloo/GlooExecutor.cpp - The executor on the gloo backend ----===//

#include "runtime/gloo/GlooExecutor.h"

#include "runtime/exec/DriverExecutor.h"
#include "runtime/gloo/GlooDriver.h"
#include "runtime/gloo/GlooStore.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

Expected<std::unique_ptr<Executor>> createGlooExecutor(const plan::Plan &P,
                                                       const ProcessPlace &Place,
                                                       const RendezvousAddress &Where,
                                                       ExecutorOptions Opts) {
  if (Place.World != P.World)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("plan @{0} is for a world of {1} ranks, but this process is rank "
                             "{2} of {3} (from {4})",
                             P.Program, P.World, Place.Rank, Place.World, Place.Source));
  if (Error E = gloo::configureRendezvous(Where))
    return E;
  auto E = std::make_unique<DriverExecutor<gloo::GlooDriver>>(P, Place.Rank, std::move(Opts));
  if (Error Err = E->init())
    return Err;
  return std::unique_ptr<Executor>(std::move(E));
}

} // namespace collc::rt
