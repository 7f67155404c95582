//===- runtime/process/CpuWorld.cpp - The CPU world of a process run -----===//

#include "runtime/process/CpuWorld.h"

#include "runtime/launch/DriverWorldGather.h"

#include "llvm/Support/FormatVariadic.h"

#if COLLC_HAVE_MPI
#include "runtime/mpi/MpiDriver.h"
#endif
#if COLLC_HAVE_GLOO
#include "runtime/gloo/GlooDriver.h"
#include "runtime/gloo/GlooStore.h"
#endif

using namespace llvm;

namespace collc::rt {

namespace {

[[maybe_unused]] Error notBuilt(StringRef Backend, StringRef Packages, StringRef Why) {
  return createStringError(inconvertibleErrorCode(),
                           formatv("{0} needs the {1} backend, and collc was built without it "
                                   "(apt-get install {2}, then rebuild)",
                                   Why, Backend, Packages));
}

} // namespace

Expected<std::unique_ptr<WorldGather>> joinCpuWorld(const ProcessPlace &Place,
                                                    const RendezvousAddress &Where, StringRef Name,
                                                    std::chrono::milliseconds Timeout) {
  if (Where.How == RendezvousAddress::Kind::Mpi) {
#if COLLC_HAVE_MPI
    return joinDriverWorldGather<mpi::MpiDriver>(Name, Place, Timeout);
#else
    return notBuilt("mpi", "libopenmpi-dev openmpi-bin", "--rendezvous mpi");
#endif
  }
#if COLLC_HAVE_GLOO
  if (Error E = gloo::configureRendezvous(Where))
    return E;
  return joinDriverWorldGather<gloo::GlooDriver>(Name, Place, Timeout);
#else
  return notBuilt("gloo", "libgloo-dev", "--rendezvous " + Where.text());
#endif
}

} // namespace collc::rt
