//===- runtime/nccl/NcclCallIssuer.h - One lowered call on the comm stream -*- C++ -*-===//
//
// How an NcclExecutor issues one call of its lowering (NcclLowering.h) on
// its comm stream: the ready waits and done records, the pack and unpack
// kernels (their tile tables uploaded here once per binding), the NCCL
// calls with their resolved pointers and premul_sum ops, and the split-size
// exchange of a runtime all_to_all_v. The same calls serve the warm-up, the
// capture, an eager step and a step in the caller's capture; only the
// event flags differ (IssueMode).
//
// An internal part of the executor (NcclExecutor.cpp); graph launches are
// NcclGraphs.h's.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLCALLISSUER_H
#define COLLC_RUNTIME_NCCL_NCCLCALLISSUER_H

#include "plan/Plan.h"
#include "runtime/exec/TensorBindings.h"
#include "runtime/nccl/NcclLowering.h"
#include "runtime/nccl/NcclResources.h"
#include "runtime/nccl/PackKernels.h"
#include "runtime/nccl/Watchdog.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace collc::rt::nccl {

/// How a stream call is issued. Events differ by where they are waited on:
/// collc's own graphs are separate from the model's work, so their waits
/// and records cross the graph's boundary (the external flags); a step
/// captured into the caller's graph (enqueueInto) is inside the model's own
/// capture, where the ready events are captured events (a plain wait joins
/// them) and the done events must be too, for the model's plain waits.
enum class IssueMode { Eager, OwnCapture, CallerCapture };

class NcclCallIssuer {
public:
  NcclCallIssuer(NcclResources &R, const TensorBindings &Bindings) : R(R), Bindings(Bindings) {}
  ~NcclCallIssuer();
  NcclCallIssuer(const NcclCallIssuer &) = delete;
  NcclCallIssuer &operator=(const NcclCallIssuer &) = delete;

  /// Issues \p C (any call of the warm-up, capture or step lists but a
  /// graph's own) in mode \p M. Outside a capture, an NCCL call that may
  /// wait on the host for a peer (the communicators are blocking: a first
  /// connection) runs under the watchdog, if there is one.
  llvm::Error issue(const Call &C, IssueMode M);

  /// The tile tables of every pack and unpack of the capture list, for the
  /// current bindings, in device memory. Rebinding may find a step in
  /// flight that reads the old tables: they are freed in the comm stream's
  /// order, after it, and the new ones are made there too, after a bounded
  /// wait for the stream (so that a copy from pageable memory cannot block
  /// on a dead peer).
  llvm::Error uploadTiles();

  /// What the executor is doing, for errors ("warm-up", "replay").
  std::string Phase = "setup";
  /// What a failed wait does (CommStreamWait.h): the executor breaks.
  std::function<void(const std::string &Why)> Abort;
  /// Bounds the blocking NCCL calls issued outside a capture.
  Watchdog *Dog = nullptr;

private:
  struct DeviceTiles {
    CopyTile *Tiles = nullptr;
    uint32_t Count = 0;
  };

  llvm::Error issueNow(const Call &C, IssueMode M);
  ncclComm_t comm(const Call &C) const { return R.Comms[C.Comm]->comm(); }
  ncclRedOp_t opOf(const Call &C) const;
  char *resolve(const Ref &Ref) const;
  /// Checks \p Result of NCCL call \p Name for \p C, notes it as the
  /// communicator's last op, and waits (bounded) while it is in progress.
  llvm::Error ncclDone(ncclResult_t Result, const Call &C, const char *Name);
  llvm::Error sendRecv(const Call &C);
  /// Runtime all_to_all_v: every rank's split sizes to the host, checked
  /// against the input rows and the output capacity on every rank (so that
  /// they refuse together), then kept for the sends and receives.
  llvm::Error exchangeCounts(const Call &C);
  void freeTiles();

  NcclResources &R;
  const TensorBindings &Bindings;
  std::map<std::pair<int, uint32_t>, DeviceTiles> Tiles; ///< (kind, plan comm) -> table
  std::vector<uint64_t> SendRows, RecvRows;              ///< of the last split-size exchange
};

} // namespace collc::rt::nccl

#endif
