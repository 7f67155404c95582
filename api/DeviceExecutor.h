//===- api/DeviceExecutor.h - The C API's executor on a GPU -----*- C++ -*-===//
//
// What collc.h's executor functions need of a backend whose memory is the
// GPU's (nccl): device bindings, the caller's CUDA stream, a step enqueued
// on the GPU and a bounded wait for it. No CUDA type appears here, so the
// API's other files build alike with or without CUDA; api/NcclDevice.cpp
// implements it over runtime/nccl/NcclExecutor.h, or, in a build without
// the nccl backend, refuses with the reason.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_API_DEVICEEXECUTOR_H
#define COLLC_API_DEVICEEXECUTOR_H

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace collc::api {

class DeviceExecutor {
public:
  virtual ~DeviceExecutor();
  virtual llvm::Error bind(llvm::StringRef Name, void *Device, uint64_t Bytes) = 0;
  /// The cudaStream_t the caller computes on (never null).
  virtual void setStream(void *CudaStream) = 0;
  /// Tensor \p Name's device address and size (a view slot or a binding).
  virtual llvm::Expected<std::pair<void *, uint64_t>> tensor(llvm::StringRef Name) const = 0;
  virtual std::vector<std::string> unboundTensors() const = 0;
  virtual llvm::Error capture() = 0;
  /// One step, enqueued between the work on the caller's stream.
  virtual llvm::Error replay() = 0;
  /// Waits at most \p Limit for the steps enqueued (0: only checks).
  virtual llvm::Error synchronize(std::chrono::milliseconds Limit) = 0;
};

/// Where and how an nccl executor runs.
struct DevicePlace {
  int64_t Rank = 0;
  /// The CUDA device; -1: the launcher's local rank modulo the devices.
  int64_t Device = -1;
  /// "mpi", "file:DIR" or "redis://HOST:PORT": where the ranks' unique ids
  /// meet (runtime/process/CpuWorld.h, as `collc run --backend nccl`).
  std::string Rendezvous;
};

/// The nccl executor of \p Place.Rank of \p P; \p Session gets what the
/// rendezvous needs alive (MPI). collcUnsupported, saying why, without a
/// GPU or in a build without the nccl backend.
llvm::Expected<std::unique_ptr<DeviceExecutor>> createNcclExecutor(const plan::Plan &P,
                                                                   const DevicePlace &Place,
                                                                   const rt::ExecutorOptions &Opts,
                                                                   std::shared_ptr<void> &Session);

} // namespace collc::api

#endif
