//===- runtime/gloo/GlooAdapters.cpp - The three interfaces on the gloo backend ===//

#include "runtime/gloo/GlooAdapters.h"

#include "runtime/interfaces/DriverCommunicator.h"
#include "runtime/interfaces/HostEagerComm.h"

using namespace llvm;

namespace collc::rt {

Expected<std::shared_ptr<Communicator>>
createGlooCommunicator(StringRef GroupName, size_t Size, size_t Rank, CommunicatorOptions Opts) {
  return createDriverCommunicator<gloo::GlooDriver>(GroupName, Size, Rank, Opts);
}

Expected<std::unique_ptr<EagerComm>> createGlooEagerComm(StringRef GroupName, size_t Size,
                                                         size_t Rank,
                                                         std::chrono::milliseconds Timeout) {
  return createHostEagerComm<gloo::GlooDriver>(GroupName, Size, Rank, Timeout);
}

template class HostSession<gloo::GlooDriver>;
template class HostServer<gloo::GlooDriver>;

} // namespace collc::rt
