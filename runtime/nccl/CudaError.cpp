//===- runtime/nccl/CudaError.cpp - CUDA and NCCL results as llvm::Error ---===//

#include "runtime/nccl/CudaError.h"

#include "llvm/Support/FormatVariadic.h"

#include <thread>

using namespace llvm;

namespace collc::rt::nccl {

Error checkCuda(cudaError_t E, const Twine &What) {
  if (E == cudaSuccess)
    return Error::success();
  cudaGetLastError(); // clear a sticky-free error so later calls start clean
  return makeError(ErrorKind::Backend,
                   What + ": CUDA error " + Twine(int(E)) + " (" + cudaGetErrorName(E) + ": " +
                       cudaGetErrorString(E) + ")");
}

Error checkNccl(ncclResult_t R, const Twine &What) {
  if (R == ncclSuccess || R == ncclInProgress)
    return Error::success();
  ErrorKind Kind = R == ncclInvalidArgument || R == ncclInvalidUsage ? ErrorKind::InvalidArgument
                                                                     : ErrorKind::Backend;
  return makeError(Kind, What + ": NCCL error " + Twine(int(R)) + " (" + ncclGetErrorString(R) +
                             "; " + ncclGetLastError(nullptr) + ")");
}

Error waitReady(ArrayRef<ncclComm_t> Comms, std::chrono::milliseconds Timeout,
                const Twine &What) {
  auto Deadline = std::chrono::steady_clock::now() + Timeout;
  for (ncclComm_t C : Comms) {
    while (true) {
      ncclResult_t State = ncclSuccess;
      if (Error E = checkNccl(ncclCommGetAsyncError(C, &State), What + ": ncclCommGetAsyncError"))
        return E;
      if (State == ncclSuccess)
        break;
      if (State != ncclInProgress)
        return checkNccl(State, What);
      if (std::chrono::steady_clock::now() > Deadline)
        return makeError(ErrorKind::Timeout,
                         What + ": still in progress after " + Twine(Timeout.count()) + " ms");
      std::this_thread::yield();
    }
  }
  return Error::success();
}

Expected<int> countCudaDevices() {
  int Count = 0;
  cudaError_t E = cudaGetDeviceCount(&Count);
  if (E != cudaSuccess) {
    cudaGetLastError(); // not sticky: keep it from the next call's result
    return makeError(ErrorKind::Unsupported,
                     formatv("no CUDA GPU: cudaGetDeviceCount failed with {0} ({1})",
                             cudaGetErrorName(E), cudaGetErrorString(E)));
  }
  if (Count == 0)
    return makeError(ErrorKind::Unsupported, "no CUDA GPU: cudaGetDeviceCount found 0 devices");
  return Count;
}

std::string ncclVersionString(int Code) {
  // 2.9 and later encode as MAJOR*10000 + MINOR*100 + PATCH.
  if (Code >= 10000)
    return formatv("{0}.{1}.{2}", Code / 10000, Code / 100 % 100, Code % 100).str();
  return formatv("{0}.{1}.{2}", Code / 1000, Code / 100 % 10, Code % 100).str();
}

} // namespace collc::rt::nccl
