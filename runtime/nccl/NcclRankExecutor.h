//===- runtime/nccl/NcclRankExecutor.h - One process's rank on its GPU -*- C++ -*-===//
//
// The nccl backend's entry in the table of process backends
// (runtime/process/ProcessBackends.h), CUDA-free so that the table and its
// callers build alike with or without CUDA:
//  1. its caller has refused a plan the ranks' comm streams cannot run in
//     NCCL's order (checkProcessPlan, StreamOrderCheck.h), before meeting
//     any peer; a machine without a GPU and a device it does not have are
//     refused here first;
//  2. the device: ExecutorOptions::Device, else the launcher's local rank
//     modulo the devices this process sees;
//  3. world rank 0 mints the unique id of the root communicator and one
//     all-gather over the run's CPU world shares it (IdGather.h);
//  4. the NcclExecutor makes the root from it, splits every other
//     communicator from the root, and keeps the CPU world, over which
//     allGatherWords() gathers.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLRANKEXECUTOR_H
#define COLLC_RUNTIME_NCCL_NCCLRANKEXECUTOR_H

#include "plan/Plan.h"
#include "runtime/exec/Executor.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/WorldGather.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>

namespace collc::rt::nccl {

/// Joins the run's CPU world (every rank of it calls the factory).
using WorldJoin = llvm::function_ref<llvm::Expected<std::unique_ptr<WorldGather>>()>;

/// The executor of \p Place's rank of \p P on its GPU; \p P has passed
/// checkProcessPlan. What this rank can judge alone is refused before
/// \p Join meets anyone; the world joined is kept by the executor.
llvm::Expected<std::unique_ptr<Executor>> createNcclRankExecutor(const plan::Plan &P,
                                                                 const ProcessPlace &Place,
                                                                 WorldJoin Join,
                                                                 ExecutorOptions Opts);

} // namespace collc::rt::nccl

#endif
