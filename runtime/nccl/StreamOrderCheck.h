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
//    them have matched; the rank issues nothing after it until then;
//  - a collective completes when every member of its subgroup reaches it
//    (collectives fused in one group are taken one after another, which
//    can only wait longer than NCCL does);
// and refuses a plan in which ranks would wait for each other forever,
// naming the cycle, the comm each rank waits for (with its program
// location) and the group it is in. NcclLowering's lowerForRank runs it, so
// the executor, `collc run --backend nccl`, the C API and the listing
// (`collc dump --format nccl`) all refuse such a plan before any rank
// creates a communicator, rather than hang until the timeout.
//
// Cost: every rank's launches once (world x steps), plus the issue order of
// the ranks an error names.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_STREAMORDERCHECK_H
#define COLLC_RUNTIME_NCCL_STREAMORDERCHECK_H

#include "plan/Plan.h"

#include "llvm/Support/Error.h"

namespace collc::rt::nccl {

/// Success, or an Unsupported RuntimeError saying why plan \p P would hang
/// on NCCL. \p P must be valid (read by readPlan, or finalized).
llvm::Error checkStreamOrder(const plan::Plan &P);

} // namespace collc::rt::nccl

#endif
