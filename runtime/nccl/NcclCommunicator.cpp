//===- runtime/nccl/NcclCommunicator.cpp - seed 002 on NCCL ---------------===//

#include "runtime/nccl/NcclCommunicator.h"

#include "runtime/seeds/DriverCommunicator.h"
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclDriver.h"

namespace collc::rt::nccl {

llvm::Expected<std::shared_ptr<Communicator>>
createNcclCommunicator(llvm::StringRef GroupName, size_t Size, size_t Rank, int Device,
                       CommunicatorOptions Opts) {
  using D = NcclDriver;
  if (llvm::Error E = checkCuda(cudaSetDevice(Device), "cudaSetDevice(" + llvm::Twine(Device) + ")"))
    return E;
  llvm::Expected<D::UniqueId> Id = D::groupId({GroupName.str()});
  if (!Id)
    return Id.takeError();
  llvm::Expected<D::Communicator> C = D::join(*Id, Size, Rank);
  if (!C)
    return C.takeError();
  D::setTimeout(*C, Opts.Timeout);
  return std::shared_ptr<Communicator>(
      std::make_shared<DriverCommunicator<D>>(*C, Rank, Size, GroupName.str()));
}

} // namespace collc::rt::nccl
