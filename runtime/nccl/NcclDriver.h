//===- runtime/nccl/NcclDriver.h - The driver layer over NCCL ----*- C++ -*-===//
//
// The CollectiveDriver on NCCL: communicators are NCCL
// communicators created eagerly and non-blocking (ncclCommInitRankConfig
// with blocking = 0: every call of theirs that waits on the host returns
// ncclInProgress and is polled within the timeout; no graph holds them, so
// an abort returns), on the device current at join; resources are device
// memory; the comm stream is a non-blocking CUDA stream of the greatest
// priority. Element types are those of NCCL (fp8 needs NCCL 2.24 and an
// SM90 GPU), premul_sum is an op created per communicator, type and factor
// and cached (the factor a value of the type: ir/PremulFactor.h).
// all_to_all is ncclAlltoAll; all_to_all_v is grouped ncclSend/ncclRecv.
// The executor makes its communicators otherwise (NcclResources.h).
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
#include "runtime/nccl/NcclMembership.h"
#include "runtime/nccl/NcclVersion.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

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
  //   plan-digest handshake), through device memory on the stream; a failed
  //   wait aborts the communicator.
  // - split: ncclCommSplit; null for a negative color.
  // - barrier: NCCL has none, so a one-element all_reduce on the
  //   communicator's scratch, which no rank leaves before every rank entered.
#define COLLC_DRIVER_OP(Result, Name, Params) static Result Name Params;
#include "runtime/exec/DriverOps.def"

  /// allGatherWords for a caller that owns more than the communicator: a
  /// failed wait calls \p Break instead of aborting \p C (an executor's
  /// graphs must go before its communicators: BrokenState.h).
  static llvm::Expected<std::vector<uint32_t>>
  allGatherWords(const Communicator &C, llvm::ArrayRef<uint32_t> Local, CommStream S,
                 llvm::function_ref<void(const std::string &)> Break);

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

} // namespace collc::rt::nccl

#endif
