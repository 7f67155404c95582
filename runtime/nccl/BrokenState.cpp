//===- runtime/nccl/BrokenState.cpp - How an NCCL executor breaks, once ----===//

#include "runtime/nccl/BrokenState.h"

#include "runtime/exec/RuntimeError.h"

using namespace llvm;

namespace collc::rt::nccl {

void BrokenState::breakWith(std::string Why, function_ref<void()> ReleaseGraphs,
                            function_ref<void(const std::string &)> AbortComms) {
  if (IsBroken)
    return;
  IsBroken = true;
  Reason = std::move(Why);
  ReleaseGraphs();
  AbortComms(Reason);
}

Error BrokenState::refuse(StringRef Verb) const {
  if (!IsBroken)
    return Error::success();
  return makeError(ErrorKind::Broken,
                   "refusing to " + Verb + ": its communicators were aborted after " + Reason);
}

} // namespace collc::rt::nccl
