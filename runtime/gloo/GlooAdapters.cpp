//===- runtime/gloo/GlooAdapters.cpp - The seeds 001-003 on the gloo backend ===//

#include "runtime/gloo/GlooAdapters.h"

#include "runtime/seeds/DriverCommunicator.h"

using namespace llvm;

namespace collc::rt {

Expected<std::shared_ptr<Communicator>>
createGlooCommunicator(StringRef GroupName, size_t Size, size_t Rank, CommunicatorOptions Opts) {
  return createDriverCommunicator<gloo::GlooDriver>(GroupName, Size, Rank, Opts);
}

template class HostSession<gloo::GlooDriver>;
template class HostServer<gloo::GlooDriver>;

} // namespace collc::rt
