//===- runtime/nccl/NcclCommunicator.cpp - the Communicator on NCCL ---------------===//

#include "runtime/nccl/NcclCommunicator.h"

#include "runtime/exec/GroupJoin.h"
#include "runtime/interfaces/DriverCommunicator.h"
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclDriver.h"

namespace collc::rt::nccl {

llvm::Expected<std::shared_ptr<Communicator>>
createNcclCommunicator(llvm::StringRef GroupName, size_t Size, size_t Rank, int Device,
                       CommunicatorOptions Opts) {
  using D = NcclDriver;
  if (llvm::Error E = checkCuda(cudaSetDevice(Device), "cudaSetDevice(" + llvm::Twine(Device) + ")"))
    return E;
  llvm::Expected<D::Communicator> C = joinGroup<D>(GroupName, Size, Rank, Opts.Timeout);
  if (!C)
    return C.takeError();
  return std::shared_ptr<Communicator>(
      std::make_shared<DriverCommunicator<D>>(*C, Rank, Size, GroupName.str()));
}

} // namespace collc::rt::nccl
