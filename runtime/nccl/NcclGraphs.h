//===- runtime/nccl/NcclGraphs.h - The CUDA graphs of an NCCL executor -*- C++ -*-===//
//
// The capture of an NcclExecutor (NcclExecutor.h): its lowering's capture
// list (NcclLowering.h) recorded on the comm stream into CUDA graphs, in
// thread-local capture mode, each instantiated once; a step launches them.
// A failure inside the capture ends it, so that the stream stays usable.
//
// The graphs hold the NCCL communicators they captured (NCCL counts them as
// persistent references, and destroying a communicator waits until none is
// left): they are destroyed before any communicator is aborted or
// destroyed.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLGRAPHS_H
#define COLLC_RUNTIME_NCCL_NCCLGRAPHS_H

#include "runtime/nccl/NcclLowering.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace collc::rt::nccl {

class NcclGraphs {
public:
  /// \p Stream: the comm stream, made at setup.
  explicit NcclGraphs(const cudaStream_t &Stream) : Stream(Stream) {}
  ~NcclGraphs() { destroy(); }
  NcclGraphs(const NcclGraphs &) = delete;
  NcclGraphs &operator=(const NcclGraphs &) = delete;

  /// Destroys the graphs there are, then records \p L's capture list: the
  /// begin, end and instantiate calls here, every other call through
  /// \p Record (which issues it into the open capture).
  llvm::Error capture(const NcclRankPlan &L, llvm::function_ref<llvm::Error(const Call &)> Record);
  /// Launches graph \p C.Graph on the comm stream; \p Step names it in errors.
  llvm::Error launch(const Call &C, uint64_t Step);
  /// Destroys every graph and its instantiation (an instantiation in flight
  /// is freed when it completes).
  void destroy();
  bool empty() const { return Execs.empty(); }

private:
  const cudaStream_t &Stream;
  std::vector<cudaGraph_t> Graphs;
  std::vector<cudaGraphExec_t> Execs;
};

} // namespace collc::rt::nccl

#endif
