//===- runtime/local/LocalCommunicator.cpp - Seed 002 over the local driver ===//

#include "runtime/local/LocalCommunicator.h"

#include "runtime/local/LocalDriver.h"
#include "runtime/seeds/DriverCommunicator.h"

using namespace llvm;

namespace collc::rt {

Expected<std::shared_ptr<Communicator>>
createLocalCommunicator(StringRef GroupName, size_t Size, size_t Rank, CommunicatorOptions Opts) {
  using D = local::LocalDriver;
  Expected<D::UniqueId> Id = D::groupId({GroupName.str()});
  if (!Id)
    return Id.takeError();
  Expected<D::Communicator> C = D::join(*Id, Size, Rank);
  if (!C)
    return C.takeError();
  D::setTimeout(*C, Opts.Timeout);
  return std::shared_ptr<Communicator>(
      std::make_shared<DriverCommunicator<D>>(*C, Rank, Size, GroupName.str()));
}

} // namespace collc::rt
