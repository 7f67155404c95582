//===- runtime/nccl/StreamOrderCheck.h - Can the comm streams' order run? -*- C++ -*-===//
//
// The compiler's cross-rank check (passes/CheckCrossRank.cpp) proves that
// a program cannot deadlock when a rank's sends and recvs stay posted until
// their waits. On NCCL they cannot always: each rank issues its plan in the
// order of IssueOrder.h, and its comm stream runs that order one group at
// a time. This check runs exactly that order, for every rank, through the
// same simulation (ir/RankSimulation.h) with the stream's semantics:
//  - an NCCL group of sends and recvs posts them together (in plan launch
//    order, so they match as the program's do) and completes when all of
//    them have matched; the rank issues nothing after it until then; a
//    group holds one communicator's calls, so a launch on another
//    communicator starts a group of its own (NCCL would run a group of two
//    in an order of its own);
//  - a collective completes when every member of its subgroup reaches it
//    (collectives fused in one group are taken one after another, which
//    can only wait longer than NCCL does);
// and refuses a plan in which ranks would wait for each other forever,
// naming the cycle, the comm each rank waits for (with its program
// location) and the group it is in. The executor (NcclExecutor::create),
// the table of process backends (`collc run --backend nccl`, the C API,
// `collc compile --backend nccl`) and the listing (`collc dump --format
// nccl`) all run it, once per plan, so they refuse such a plan before any
// rank creates a communicator, rather than hang until the timeout.
//
// Cost: every rank's launches once (world x steps), plus the issue order of
// the ranks an error names.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_STREAMORDERCHECK_H
#define COLLC_RUNTIME_NCCL_STREAMORDERCHECK_H

#include "plan/Plan.h"
#include "runtime/nccl/NcclLowering.h"

#include "llvm/Support/Error.h"

namespace collc::rt::nccl {

/// Success, or an Unsupported RuntimeError saying why plan \p P would hang
/// on NCCL. \p P must be valid (read by readPlan, or finalized).
llvm::Error checkStreamOrder(const plan::Plan &P);

/// lowerForRank(\p P, \p Rank) of a plan checkStreamOrder accepts: what the
/// listing prints and NcclExecutor::create runs.
llvm::Expected<NcclRankPlan> lowerRunnableForRank(const plan::Plan &P, int64_t Rank);

} // namespace collc::rt::nccl

#endif
