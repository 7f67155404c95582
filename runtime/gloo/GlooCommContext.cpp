//===- runtime/gloo/GlooCommContext.cpp - The Gloo context under a comm ----===//

#include "runtime/gloo/GlooCommContext.h"

#include "runtime/exec/DriverExecutor.h"
#include "runtime/gloo/GlooShmDriver.h"

#include "llvm/Support/Casting.h"

using namespace llvm;

namespace collc::rt::gloo {

Expected<std::shared_ptr<::gloo::Context>> commContext(const Executor &X, uint32_t Comm) {
  const auto *G = dyn_cast<DriverExecutor<GlooShmDriver>>(&X);
  if (!G)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("the executor of plan @{0} runs on the {1} backend, not gloo: it "
                             "has no Gloo context",
                             X.plan().Program, X.backend()));
  Expected<GlooShmDriver::Communicator> C = G->communicatorOf(Comm);
  if (!C)
    return C.takeError();
  std::shared_ptr<::gloo::Context> Ctx = GlooDriver::context(GlooShmDriver::engineOf(*C));
  if (!Ctx) // every joined group has one; a broken join returned no executor
    return makeError(ErrorKind::Backend,
                     formatv("comm #{0} of plan @{1} has no connected Gloo context", Comm,
                             X.plan().Program));
  return Ctx;
}

} // namespace collc::rt::gloo
