//===- runtime/nccl/NcclDriver.h - The driver layer over NCCL ----*- C++ -*-===//
//
// The CollectiveDriver (seed 000) on NCCL: communicators are NCCL
// communicators created eagerly and non-blocking (ncclCommInitRankConfig
// with blocking = 0, so that an abort is always safe), on the device current
// at join; resources are device memory; the comm stream is a non-blocking
// CUDA stream of the greatest priority. Element types are those of NCCL
// (fp8 needs NCCL 2.24 and an SM90 GPU), premul_sum is an op created per
// communicator, type and factor and cached. all_to_all is ncclAlltoAll;
// all_to_all_v is grouped ncclSend/ncclRecv.
//
// synchronize() never waits blindly: it polls the stream and the
// asynchronous errors of every communicator that issued on it, and past the
// communicator's timeout it aborts them and says which op it was waiting
// for. A communicator that failed or was aborted refuses further work.
//
// Built only when CUDA and NCCL are found (COLLC_HAVE_NCCL).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLDRIVER_H
#define COLLC_RUNTIME_NCCL_NCCLDRIVER_H

#include "runtime/exec/CollectiveDriver.h"
#include "runtime/exec/Timeout.h"

#include "llvm/ADT/ArrayRef.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace collc::rt::nccl {

/// The oldest NCCL the backend accepts: ncclCommGetAsyncError and CUDA
/// graph capture of NCCL calls both work from 2.9.6 on.
constexpr int kMinNcclVersion = 20906;

/// Checks the NCCL library this process loaded, with a clear error.
llvm::Error checkNcclVersion();

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
  /// ncclCommAbort; later calls are refused. \p Why is kept for them.
  void abort(std::string Why);
  bool aborted() const { return Aborted.load(); }
  /// Refuses work on an aborted or failed communicator.
  llvm::Error usable() const;

  /// The premul_sum op for \p T and \p Scale (created once).
  llvm::Expected<ncclRedOp_t> preMulSum(ElemType T, double Scale);
  /// Four bytes of device memory for barrier(), made at the first barrier
  /// (outside any capture) and freed with the communicator.
  llvm::Expected<void *> barrierScratch();

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

/// A comm stream: non-blocking, greatest priority, destroyed with its owner.
class CommStreamOwner {
public:
  explicit CommStreamOwner(cudaStream_t S) : S(S) {}
  ~CommStreamOwner();
  cudaStream_t get() const { return S; }

private:
  cudaStream_t S;
};

/// ncclAlltoAll where the loaded NCCL has it (2.28 and later, looked up
/// at run time so that one binary runs on older libraries too), else one
/// grouped send and receive per peer. \p Ranks is the communicator's size.
ncclResult_t ncclAllToAllAnyVersion(const void *Send, void *Recv, size_t Count,
                                    ncclDataType_t Type, int Ranks, ncclComm_t Comm,
                                    cudaStream_t S);

ncclDataType_t ncclTypeOf(ElemType T);
ncclRedOp_t ncclOpOf(ReduceOp Op); ///< not for PremulSum

struct NcclDriver {
  using Communicator = std::shared_ptr<NcclMembership>;
  using UniqueId = ncclUniqueId;
  using DataType = ncclDataType_t;
  using CommStream = cudaStream_t;
  /// Device memory.
  struct Resource {
    void *Data = nullptr;
    uint64_t Bytes = 0;
  };
  using Elems = Elements<ncclDataType_t>;

  static llvm::StringRef name() { return "nccl"; }

  /// An unknown type, a partial element, or fp8 without NCCL 2.24 and an
  /// SM90 GPU is an error value.
  static llvm::Expected<Elems> elements(ElemType T, uint64_t Bytes);

  // The driver's operations (runtime/exec/DriverOps.def), as NCCL runs them:
  // - groupId: in-process, minted by the first rank that asks, remembered.
  // - join joins on the current device and waits (bounded) for the
  //   non-blocking init.
  // - allReduce and reduceScatter refuse premul_sum, which needs its factor
  //   (the scaled ones take it).
  // - allGatherWords: a synchronous all_gather of a few host words (the
  //   plan-digest handshake), through device memory on the stream.
  // - split: ncclCommSplit; null for a negative color.
  // - barrier: NCCL has none, so a one-element all_reduce on the
  //   communicator's scratch, which no rank leaves before every rank entered.
#define COLLC_DRIVER_OP(Result, Name, Params) static Result Name Params;
#include "runtime/exec/DriverOps.def"

  // --- streams ----------------------------------------------------------------
  using StreamOwner = std::unique_ptr<CommStreamOwner>;
  /// On the current device. Creation failures surface at first use.
  static StreamOwner createStream(llvm::StringRef Name);
  static CommStream streamOf(const StreamOwner &S) { return S ? S->get() : nullptr; }
  /// Waits for \p S with the deadline and health checks described above.
  static llvm::Error synchronize(CommStream S);
  /// A GPU stream has no host-side tickets: a wait for any ticket is a
  /// bounded wait for everything enqueued so far (a superset).
  static uint64_t record(CommStream) { return 0; }
  static llvm::Error waitFor(CommStream S, uint64_t) { return synchronize(S); }
  /// The GPU runs what was enqueued without the host's help.
  static void flush(CommStream) {}
  static Resource resource(void *Data, uint64_t Bytes) { return Resource{Data, Bytes}; }
};

inline llvm::Error NcclDriver::health(const Communicator &C) { return C->health(); }
inline void NcclDriver::setTimeout(const Communicator &C, std::chrono::milliseconds T) {
  C->Timeout = T;
}

static_assert(ExecutorDriver<NcclDriver>);

/// Waits for the work on \p S, polling every communicator in \p Comms, up
/// to the smallest of their timeouts (defaultTimeout() without any); past
/// it aborts them all. \p Context
/// names what was being waited for in errors. With \p Limit the wait ends
/// there instead, with a Timeout error that leaves the communicators up (a
/// caller's bounded synchronize, which may wait again).
llvm::Error waitForStream(cudaStream_t S, llvm::ArrayRef<NcclMembership *> Comms,
                          const std::string &Context,
                          std::optional<std::chrono::milliseconds> Limit = std::nullopt);

} // namespace collc::rt::nccl

#endif
