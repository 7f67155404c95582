//===- tests/gpu/GpuTestUtil.h - Helpers of the GPU tests and bench -*- C++ -*-===//
#ifndef COLLC_TESTS_GPU_GPUTESTUTIL_H
#define COLLC_TESTS_GPU_GPUTESTUTIL_H

#include "compiler/Compile.h"
#include "runtime/nccl/NcclExecutor.h"
#include "runtime/verify/PlanChecker.h"
#include "runtime/verify/SyntheticData.h"

#include <cuda_runtime_api.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace collc::gpu {

/// Why GPU tests cannot run here, or "" when a GPU is present.
inline std::string whyNoGpu() {
  int Count = 0;
  cudaError_t E = cudaGetDeviceCount(&Count);
  if (E != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA GPU: cudaGetDeviceCount failed with ") + cudaGetErrorName(E) +
           " (" + cudaGetErrorString(E) + ")";
  }
  if (Count == 0)
    return "no CUDA GPU: cudaGetDeviceCount found 0 devices";
  return "";
}

/// Device memory for every tensor the executor needs bound, freed at the end.
struct DeviceTensors {
  std::vector<void *> Owned;
  ~DeviceTensors() {
    for (void *P : Owned)
      cudaFree(P);
  }
  llvm::Error bindAll(const plan::Plan &P, rt::nccl::NcclExecutor &X) {
    for (const std::string &Name : X.unboundTensors()) {
      uint32_t T = 0;
      while (P.Tensors[T].Name != Name)
        ++T;
      uint64_t Bytes = uint64_t(P.Tensors[T].Type.bytes());
      void *Ptr = nullptr;
      if (cudaMalloc(&Ptr, std::max<uint64_t>(Bytes, 1)) != cudaSuccess)
        return llvm::createStringError(llvm::inconvertibleErrorCode(), "cudaMalloc failed");
      Owned.push_back(Ptr);
      if (llvm::Error E = X.bind(Name, Ptr, Bytes))
        return E;
    }
    return llvm::Error::success();
  }
};

/// Tensors some compute of rank \p Rank makes (the model's inputs to comms).
inline std::set<uint32_t> computeOutputs(const plan::Plan &P) {
  std::set<uint32_t> Out;
  for (const plan::Compute &C : P.Computes)
    for (uint32_t T : C.Outputs)
      Out.insert(T);
  return Out;
}

/// Writes the deterministic synthetic inputs of rank \p Rank to the device.
inline llvm::Error fillInputs(const plan::Plan &P, int64_t Rank, rt::nccl::NcclExecutor &X) {
  for (uint32_t T : computeOutputs(P)) {
    llvm::Expected<llvm::MutableArrayRef<char>> Dev = X.tensor(P.Tensors[T].Name);
    if (!Dev) { // not touched by any comm
      llvm::consumeError(Dev.takeError());
      continue;
    }
    std::vector<char> Host(uint64_t(P.Tensors[T].Type.bytes()));
    rt::fillSynthetic(P, T, Rank, Host);
    if (cudaMemcpy(Dev->data(), Host.data(), Host.size(), cudaMemcpyHostToDevice) != cudaSuccess)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "cudaMemcpy failed");
  }
  // The copies ran on the legacy stream, which the non-blocking comm stream
  // does not wait for.
  if (cudaDeviceSynchronize() != cudaSuccess)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "cudaDeviceSynchronize failed");
  return llvm::Error::success();
}

/// Zeroes every comm output of the rank: the reference expects the unused
/// capacity of an all_to_all_v to stay zero, and a step that wrote nothing
/// must not pass for one that wrote the right values.
inline llvm::Error zeroOutputs(const plan::Plan &P, int64_t Rank, rt::nccl::NcclExecutor &X) {
  for (const plan::Comm &C : P.Comms) {
    if (!C.Ranks.contains(Rank))
      continue;
    for (uint32_t T : C.Outputs) {
      llvm::Expected<llvm::MutableArrayRef<char>> Dev = X.tensor(P.Tensors[T].Name);
      if (!Dev)
        return Dev.takeError();
      if (cudaMemset(Dev->data(), 0, uint64_t(P.Tensors[T].Type.bytes())) != cudaSuccess)
        return llvm::createStringError(llvm::inconvertibleErrorCode(), "cudaMemset failed");
    }
  }
  return llvm::Error::success();
}

/// Zeroed outputs, then the inputs (an in-place output may share an input's
/// memory), on the device before the next step.
inline llvm::Error resetTensors(const plan::Plan &P, int64_t Rank, rt::nccl::NcclExecutor &X) {
  if (llvm::Error E = zeroOutputs(P, Rank, X))
    return E;
  return fillInputs(P, Rank, X);
}

/// Host copies of every comm output of the rank, by tensor.
using HostTensors = std::map<uint32_t, std::vector<char>>;
inline HostTensors readOutputs(const plan::Plan &P, int64_t Rank,
                                                         rt::nccl::NcclExecutor &X) {
  std::map<uint32_t, std::vector<char>> Out;
  for (const plan::Comm &C : P.Comms) {
    if (!C.Ranks.contains(Rank))
      continue;
    for (uint32_t T : C.Outputs) {
      llvm::Expected<llvm::MutableArrayRef<char>> Dev = X.tensor(P.Tensors[T].Name);
      if (!Dev) {
        llvm::consumeError(Dev.takeError());
        continue;
      }
      std::vector<char> Host(uint64_t(P.Tensors[T].Type.bytes()));
      cudaMemcpy(Host.data(), Dev->data(), Host.size(), cudaMemcpyDeviceToHost);
      Out[T] = std::move(Host);
    }
  }
  return Out;
}

/// \p Got against the independent reference (one rank).
inline llvm::Expected<rt::CheckSummary> checkOutputs(const plan::Plan &P, const HostTensors &Got) {
  return rt::checkPlanResults(P, [&](int64_t, uint32_t T) -> llvm::ArrayRef<char> {
    auto It = Got.find(T);
    return It == Got.end() ? llvm::ArrayRef<char>() : llvm::ArrayRef<char>(It->second);
  });
}

} // namespace collc::gpu

#endif
