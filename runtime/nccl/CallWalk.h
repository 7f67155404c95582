//===- runtime/nccl/CallWalk.h - Issuing a lowering's calls in order -*- C++ -*-===//
//
// How the executor walks the lists of a NcclRankPlan, free of CUDA so that the
// rules are tested on any machine (tests/runtime/NcclCallWalkTest.cpp):
//  - stepCalls(): one step as individual calls (runEager, enqueueInto):
//    each graph's captured calls where the step launches that graph, and
//    the eager calls between graphs.
//  - issueCalls(): the group-balance rule. NCCL's group depth belongs to
//    the calling thread: a failure between ncclGroupStart and ncclGroupEnd
//    that returned at once would leave every later NCCL call of the thread
//    queued and never launched, so later steps read zeros or wait out their
//    timeouts and the first cause is hidden. Every group a failure leaves
//    open is therefore ended (NCCL drops a group that holds a failed call
//    and reports it at its end) before the failure is returned.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_CALLWALK_H
#define COLLC_RUNTIME_NCCL_CALLWALK_H

#include "runtime/nccl/NcclLowering.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace collc::rt::nccl {

/// The calls of \p List, in order.
std::vector<const Call *> callsOf(const std::vector<Call> &List);

/// One step of \p L as calls, in issue order (graph boundaries dropped).
std::vector<const Call *> stepCalls(const NcclRankPlan &L);

/// Issues \p Calls through \p Issue, GroupStart and GroupEnd included. On
/// the first failure, issues a GroupEnd for every group still open
/// (innermost first) and returns the failure, joined with any failure of
/// those ends; nothing else is issued after it.
llvm::Error issueCalls(llvm::ArrayRef<const Call *> Calls,
                       llvm::function_ref<llvm::Error(const Call &)> Issue);

} // namespace collc::rt::nccl

#endif
