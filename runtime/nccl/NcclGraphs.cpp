//===- runtime/nccl/NcclGraphs.cpp - The CUDA graphs of an NCCL executor ---===//

#include "runtime/nccl/NcclGraphs.h"

#include "runtime/nccl/CallWalk.h"
#include "runtime/nccl/CudaError.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt::nccl {

Error NcclGraphs::capture(const NcclRankPlan &L, function_ref<Error(const Call &)> Record) {
  destroy();
  Graphs.assign(L.Graphs, nullptr);
  Execs.assign(L.Graphs, nullptr);
  bool Open = false;
  auto Issue = [&](const Call &C) -> Error {
    switch (C.Kind) {
    case CallKind::BeginCapture:
      if (Error E = checkCuda(cudaStreamBeginCapture(Stream, cudaStreamCaptureModeThreadLocal),
                              "cudaStreamBeginCapture"))
        return E;
      Open = true;
      return Error::success();
    case CallKind::EndCapture:
      Open = false;
      return checkCuda(cudaStreamEndCapture(Stream, &Graphs[C.Graph]), "cudaStreamEndCapture");
    case CallKind::Instantiate:
      return checkCuda(cudaGraphInstantiate(&Execs[C.Graph], Graphs[C.Graph], 0),
                       formatv("cudaGraphInstantiate of graph {0}", C.Graph));
    default:
      return Record(C);
    }
  };
  // A failure inside a group has ended the group (issueCalls); the capture
  // is ended here, so that the stream stays usable.
  Error E = issueCalls(callsOf(L.Capture), Issue);
  if (!E)
    return Error::success();
  if (Open) {
    cudaGraph_t Broken = nullptr;
    cudaStreamEndCapture(Stream, &Broken);
    if (Broken)
      cudaGraphDestroy(Broken);
    cudaGetLastError();
  }
  destroy();
  return E;
}

Error NcclGraphs::launch(const Call &C, uint64_t Step) {
  if (C.Graph < 0 || size_t(C.Graph) >= Execs.size() || !Execs[C.Graph])
    return makeError(ErrorKind::InvalidArgument,
                     formatv("graph {0} was not captured (step {1})", C.Graph, Step));
  return checkCuda(cudaGraphLaunch(Execs[C.Graph], Stream),
                   formatv("cudaGraphLaunch of graph {0}, step {1}", C.Graph, Step));
}

void NcclGraphs::destroy() {
  for (cudaGraphExec_t E : Execs)
    if (E)
      cudaGraphExecDestroy(E);
  for (cudaGraph_t G : Graphs)
    if (G)
      cudaGraphDestroy(G);
  Execs.clear();
  Graphs.clear();
}

} // namespace collc::rt::nccl
