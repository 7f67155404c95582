//===- runtime/nccl/NcclMembership.h - One device's NCCL communicator -*- C++ -*-===//
//
// What the driver, the executor and the interface adapters hold of an NCCL
// communicator: the communicator of one device (one rank of it), its
// health, its abort, and what is made for it once and freed with it (the
// premul_sum ops, the barrier's scratch). A communicator that failed or was
// aborted refuses further work.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLMEMBERSHIP_H
#define COLLC_RUNTIME_NCCL_NCCLMEMBERSHIP_H

#include "ir/Types.h"
#include "runtime/exec/Timeout.h"

#include "llvm/Support/Error.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace collc::rt::nccl {

/// One device's membership of an NCCL communicator.
class NcclMembership {
public:
  NcclMembership(ncclComm_t Comm, int Rank, int Size, int Device, std::string Name);
  /// Finishes (ncclCommFinalize, then ncclCommDestroy) unless aborted.
  ~NcclMembership();
  NcclMembership(const NcclMembership &) = delete;
  NcclMembership &operator=(const NcclMembership &) = delete;

  ncclComm_t comm() const { return Comm; }
  int rank() const { return Rank; }
  int size() const { return Size; }
  int device() const { return Device; }
  const std::string &name() const { return Name; }

  /// Never blocks: the communicator's asynchronous error, or Broken after
  /// an abort.
  llvm::Error health() const;
  /// ncclCommAbort; later calls are refused. \p Why ("a timeout of ...") is
  /// kept for them. Whoever holds CUDA graphs that captured the
  /// communicator destroys them first (BrokenState.h).
  void abort(std::string Why);
  bool aborted() const { return Aborted.load(); }
  /// Refuses work on an aborted or failed communicator.
  llvm::Error usable() const;

  /// The premul_sum op for \p T (NCCL's \p Type) and \p Scale, a value of
  /// \p T (ir/PremulFactor.h; an error names a factor that is not); created
  /// once.
  llvm::Expected<ncclRedOp_t> preMulSum(ElemType T, ncclDataType_t Type, double Scale);
  /// Four bytes of device memory for barrier(), made at the first barrier
  /// (outside any capture, zeroed on its stream \p S) and freed with the
  /// communicator.
  llvm::Expected<void *> barrierScratch(cudaStream_t S);

  std::chrono::milliseconds Timeout = defaultTimeout();
  /// The last op issued, for errors ("all_reduce #57 of 4096 f32").
  std::string LastOp;
  uint64_t Issued = 0;

private:
  ncclComm_t Comm;
  int Rank, Size, Device;
  std::string Name;
  std::atomic<bool> Aborted{false};
  std::string AbortReason;
  std::mutex PreMulMutex;
  std::map<std::pair<int, double>, ncclRedOp_t> PreMulOps;
  void *Scratch = nullptr;
};

} // namespace collc::rt::nccl

#endif
