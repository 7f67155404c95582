//===- runtime/nccl/CudaError.h - CUDA and NCCL results as llvm::Error -*- C++ -*-===//
//
// Every CUDA and NCCL call of the backend goes through these, so a failure
// reads as "cudaMalloc of buf3 (33574912 bytes): out of memory" rather than
// a number. Non-blocking communicators return ncclInProgress while work is
// being set up; waitReady() polls them to completion (NCCL requires that
// before the next call on the communicator), within a deadline.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_CUDAERROR_H
#define COLLC_RUNTIME_NCCL_CUDAERROR_H

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Twine.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>

namespace collc::rt::nccl {

llvm::Error checkCuda(cudaError_t E, const llvm::Twine &What);
/// ncclInProgress counts as success here: see waitReady().
llvm::Error checkNccl(ncclResult_t R, const llvm::Twine &What);

/// Polls ncclCommGetAsyncError on \p Comms until none is in progress, or
/// until \p Timeout; an asynchronous error or the timeout is an error that
/// names \p What.
llvm::Error waitReady(llvm::ArrayRef<ncclComm_t> Comms, std::chrono::milliseconds Timeout,
                      const llvm::Twine &What);

/// The number of CUDA devices this process sees, or why there is none: an
/// error that starts "no CUDA GPU: " (what the tool, the C API and the GPU
/// tests say before meeting any peer).
llvm::Expected<int> countCudaDevices();

/// The NCCL library's version as a.b.c, and whether it is at least \p Code
/// (NCCL_VERSION_CODE form).
std::string ncclVersionString(int Code);

} // namespace collc::rt::nccl

#endif
