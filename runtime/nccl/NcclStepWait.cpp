//===- runtime/nccl/NcclStepWait.cpp - Waiting for an NCCL executor's steps ===//

#include "runtime/nccl/NcclStepWait.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt::nccl {

namespace {

/// The first comm of this rank whose done event has not happened, as
/// "comm #3 (all_reduce at model.coll:12:3)".
std::string pendingOp(const NcclResources &R) {
  const plan::Plan &P = R.P;
  for (size_t K = 0; K != R.Done.size(); ++K)
    if (R.Done[K] && cudaEventQuery(R.Done[K]) == cudaErrorNotReady) {
      const plan::Comm &C = P.Comms[K];
      cudaGetLastError(); // NotReady is not an error to keep
      return formatv("comm #{0} ({1} at {2}{3})", K, commKindName(C.Kind), P.Source,
                     C.Loc.empty() ? "" : ":" + C.Loc)
          .str();
    }
  cudaGetLastError();
  return "an op before any done event";
}

} // namespace

Error waitForSteps(const NcclResources &R, StringRef Phase, uint64_t Steps,
                   std::optional<std::chrono::milliseconds> Limit, AbortFn Abort) {
  Error E = waitForStream(R.Stream, R.memberships(),
                          formatv("rank {0}, step {1}", R.Rank, Steps).str(), Limit, Abort);
  if (!E)
    return E;
  std::string Op = pendingOp(R);
  return handleErrors(std::move(E), [&](const RuntimeError &RE) {
    return makeError(
        RE.kind(),
        formatv("{0} of plan @{1}: waiting for {2}: {3}", Phase, R.P.Program, Op, RE.text()),
        RE.peer());
  });
}

Error commsHealth(const NcclResources &R) {
  for (const auto &C : R.Comms)
    if (Error E = C->health())
      return E;
  return Error::success();
}

} // namespace collc::rt::nccl
