//===- tools/collc/NcclRun.h - One rank of `collc run --backend nccl` -*- C++ -*-===//
//
// `collc run --backend nccl` under a launcher (mpirun, srun, torchrun): this
// process runs its rank on one GPU, LocalRank % the devices it sees.
//  1. No CUDA GPU: it fails at once ("no CUDA GPU: ..."), before meeting
//     any peer, so a run without GPUs ends at once on every rank.
//  2. It joins the run's CPU world (runtime/process/CpuWorld.h: MPI under --rendezvous mpi,
//     else Gloo on the store) and exchanges the NCCL unique ids over it in
//     one all-gather (runtime/nccl/IdGather.h); the NcclExecutor creates
//     its communicators from that table.
//  3. Tensors no plan buffer holds get device memory; every step, each of
//     this rank's computes copies its outputs' synthetic data
//     (runtime/verify/SyntheticData.h, made once on the host) to the device
//     on a model stream and records its ready event; the step is the
//     replay of the captured CUDA graphs, timed from its launch to the end
//     of synchronize().
//  4. The results are copied back and checked for this rank (reductions in
//     any order: NCCL's rings and trees do not add in rank order), and the
//     figures of every rank reach rank 0 over the same CPU world
//     (RankReport.h).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_NCCLRUN_H
#define COLLC_TOOLS_COLLC_NCCLRUN_H

#include "tools/collc/ProcessRun.h"

namespace collc::tool {

/// Runs this process's rank of \p P on its GPU; returns the exit code.
int runThisProcessOnGpu(const plan::Plan &P, const ProcessRunOptions &O, llvm::raw_ostream &Out,
                        llvm::raw_ostream &Err);

} // namespace collc::tool

#endif
