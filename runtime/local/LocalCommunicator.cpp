//===- runtime/local/LocalCommunicator.cpp - Seed 002 over the local driver ===//

#include "runtime/local/LocalCommunicator.h"

#include "runtime/local/LocalDriver.h"
#include "runtime/interfaces/DriverCommunicator.h"
#include "runtime/interfaces/HostEagerComm.h"

using namespace llvm;

namespace collc::rt {

Expected<std::shared_ptr<Communicator>>
createLocalCommunicator(StringRef GroupName, size_t Size, size_t Rank, CommunicatorOptions Opts) {
  return createDriverCommunicator<local::LocalDriver>(GroupName, Size, Rank, Opts);
}

Expected<std::unique_ptr<EagerComm>> createLocalEagerComm(StringRef GroupName, size_t Size,
                                                          size_t Rank,
                                                          std::chrono::milliseconds Timeout) {
  return createHostEagerComm<local::LocalDriver>(GroupName, Size, Rank, Timeout);
}

} // namespace collc::rt
