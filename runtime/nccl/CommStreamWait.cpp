//===- runtime/nccl/CommStreamWait.cpp - A bounded wait for a comm stream --===//

#include "runtime/nccl/CommStreamWait.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/Timeout.h"
#include "runtime/nccl/CudaError.h"

#include "llvm/Support/FormatVariadic.h"

#include <thread>

using namespace llvm;

namespace collc::rt::nccl {

Error waitForStream(cudaStream_t S, ArrayRef<NcclMembership *> Comms, const std::string &Context,
                    std::optional<std::chrono::milliseconds> Limit, AbortFn Abort) {
  auto AbortAll = [&](const std::string &Why) {
    if (Abort)
      return Abort(Why);
    for (NcclMembership *C : Comms)
      C->abort(Why);
  };
  std::chrono::milliseconds Timeout =
      Comms.empty() ? defaultTimeout() : std::chrono::milliseconds::max();
  for (NcclMembership *C : Comms)
    Timeout = std::min(Timeout, C->Timeout);
  if (Limit)
    Timeout = *Limit;
  auto Start = std::chrono::steady_clock::now();
  auto Deadline = Start + Timeout;
  for (unsigned Polls = 0;; ++Polls) {
    cudaError_t Q = cudaStreamQuery(S);
    if (Q == cudaSuccess)
      return Error::success();
    if (Q != cudaErrorNotReady)
      return checkCuda(Q, Context + ": cudaStreamQuery");
    cudaGetLastError(); // NotReady is not an error to keep
    for (NcclMembership *C : Comms)
      if (Error E = C->health()) {
        std::string Why = toString(std::move(E));
        AbortAll(Why);
        return makeError(ErrorKind::Broken, Context + ": " + Why + "; communicators aborted");
      }
    if (std::chrono::steady_clock::now() >= Deadline) {
      std::string Waiting;
      for (NcclMembership *C : Comms)
        Waiting += formatv("{0}{1}: last issued {2}", Waiting.empty() ? "" : "; ", C->name(),
                           C->LastOp.empty() ? "nothing" : C->LastOp)
                       .str();
      if (Limit) // the caller's bound: its communicators stay up
        return makeError(ErrorKind::Timeout,
                         formatv("{0}: the comm stream was not done after {1} ms ({2})", Context,
                                 Timeout.count(), Waiting.empty() ? "no NCCL op" : Waiting));
      AbortAll(formatv("{0} timed out after {1} ms", Context, Timeout.count()).str());
      return makeError(ErrorKind::Timeout,
                       formatv("{0}: the comm stream was not done after {1} ms ({2}); "
                               "communicators aborted",
                               Context, Timeout.count(), Waiting.empty() ? "no NCCL op" : Waiting));
    }
    // Spin briefly (small collectives finish in microseconds), then nap.
    if (Polls > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

} // namespace collc::rt::nccl
