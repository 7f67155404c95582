//===- runtime/nccl/NcclResources.h - What an NCCL executor sets up once -*- C++ -*-===//
//
// The setup of an NcclExecutor (NcclExecutor.h): the lowering's setup list
// (NcclLowering.h) walked once, eagerly: the device, the comm stream (of
// the greatest priority) and a stream of the model's own until the caller
// names one, the fork and join events, the communicators (the world's root
// from its unique id, non-blocking so that joining is bounded; every
// communicator that carries traffic split from it, blocking and sharing its
// resources), the premul_sum ops, the plan's buffers (zeroed on the comm
// stream), the ready and done events. Everything is freed with it, the
// communicators last (the split ones, then the root).
//
// An internal part of the executor: the capture (NcclGraphs.h), the calls
// (NcclCallIssuer.h) and the waits (NcclStepWait.h) read it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLRESOURCES_H
#define COLLC_RUNTIME_NCCL_NCCLRESOURCES_H

#include "plan/Plan.h"
#include "runtime/nccl/NcclExecutorOptions.h"
#include "runtime/nccl/NcclLowering.h"
#include "runtime/nccl/NcclMembership.h"

#include "llvm/Support/Error.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <map>
#include <memory>
#include <vector>

namespace collc::rt::nccl {

struct NcclResources {
  NcclResources(const plan::Plan &P, int64_t Rank, const NcclRankPlan &L,
                const NcclExecutorOptions &Opts)
      : P(P), Rank(Rank), L(L), Opts(Opts) {}
  /// Frees everything; the communicators last (finalized, or aborted past
  /// their timeout), the world's after the others.
  ~NcclResources();
  NcclResources(const NcclResources &) = delete;
  NcclResources &operator=(const NcclResources &) = delete;

  /// Checks the element types, walks the setup list (each communicator
  /// waited for, bounded), then creates the premul_sum ops.
  llvm::Error setup();

  /// Device memory of \p Bytes, zeroed on \p S, freed with the rest.
  llvm::Expected<void *> allocateOwned(uint64_t Bytes, cudaStream_t S, llvm::StringRef What);

  std::vector<NcclMembership *> memberships() const;
  std::vector<ncclComm_t> rawComms() const;
  /// Plan buffer \p B (or the scratch and counts buffers after them).
  char *buffer(int32_t B) const;

  const plan::Plan &P;
  int64_t Rank;
  const NcclRankPlan &L;
  const NcclExecutorOptions &Opts;

  int SMs = 1;
  cudaStream_t Stream = nullptr;
  /// The model's work until the caller names its stream (setStream).
  cudaStream_t Model = nullptr;
  cudaEvent_t Fork = nullptr, Join = nullptr;
  /// The world's communicator from its unique id, only to split from.
  std::shared_ptr<NcclMembership> Root;
  /// NcclRankPlan::Comms, split from Root: the world's traffic first.
  std::vector<std::shared_ptr<NcclMembership>> Comms;
  std::vector<ncclRedOp_t> PreMulOps; ///< per NcclRankPlan::PreMulSums
  std::map<int32_t, char *> Buffers;
  /// Pinned host memory for every rank's split sizes (runtime all_to_all_v).
  char *HostCounts = nullptr;
  bool HasRuntimeAllToAllV = false;
  std::vector<cudaEvent_t> Ready; ///< per compute
  std::vector<cudaEvent_t> Done;  ///< per plan comm of this rank, else null
  std::vector<int32_t> MadeBy;    ///< tensor -> the first comm of this rank making it, or -1
  /// Tensors bound by bindOwnMemory().
  std::vector<void *> Owned;

private:
  /// Every element type this rank's calls issue runs with the loaded NCCL
  /// on this GPU (fp8: NCCL 2.24 and SM90), refused before anything is made.
  llvm::Error checkElementTypes() const;
  llvm::Error setupCall(const Call &C);
  llvm::Error createStreams();
  llvm::Error createRoot();
  llvm::Error splitFromRoot(const Call &C);
  llvm::Error createEvents();
};

} // namespace collc::rt::nccl

#endif
