//===- runtime/nccl/BrokenState.h - How an NCCL executor breaks, once -*- C++ -*-===//
//
// An NCCL executor breaks when it cannot know what NCCL will still do: a
// wait past its timeout, a communicator's asynchronous error, a call stuck
// in progress. Breaking aborts its communicators, and the order is fixed
// by NCCL 2.28: ncclCommAbort (and ncclCommDestroy) reclaims a
// communicator blocking, until no CUDA graph holds its captured work
// (init.cc, commDestroySync: localPersistentRefs), and that count drops
// only once every graph that captured it, and every instantiation of one,
// is destroyed. So the graphs go first, then the communicators; the other
// way round the abort never returns, on the very failure it is there for.
// After it every path that would issue work refuses, with the reason.
//
// CUDA-free, so that the order and the refusals are tested on any machine
// (tests/runtime/NcclBrokenStateTest.cpp); the executor (NcclExecutor.cpp)
// supplies the two steps.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_BROKENSTATE_H
#define COLLC_RUNTIME_NCCL_BROKENSTATE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace collc::rt::nccl {

class BrokenState {
public:
  /// Breaks, once: \p ReleaseGraphs (every graph and instantiation that
  /// captured a communicator), then \p AbortComms with \p Why. A later call
  /// does nothing: the first reason is the one kept.
  void breakWith(std::string Why, llvm::function_ref<void()> ReleaseGraphs,
                 llvm::function_ref<void(const std::string &Why)> AbortComms);
  bool broken() const { return IsBroken; }
  const std::string &reason() const { return Reason; }
  /// Success, or a Broken error: "refusing to <Verb>: its communicators were
  /// aborted after <why>".
  llvm::Error refuse(llvm::StringRef Verb) const;

private:
  bool IsBroken = false;
  std::string Reason;
};

} // namespace collc::rt::nccl

#endif
