//===- runtime/nccl/NcclBreaker.h - How an NCCL executor breaks -*- C++ -*-===//
//
// The executor's side of BrokenState.h: it breaks its own parts, its CUDA
// graphs first, then its communicators (the split ones in reverse, then
// the root they share resources with), once, under a lock (the watchdog's
// thread breaks it too, while the executor's thread is blocked in an NCCL
// call). Every path that issues work asks usable() first; a wait that ran
// out of the executor's time goes through breakOn().
//
// An internal part of the executor (NcclExecutor.cpp). It is also the
// function a failed wait calls (CommStreamWait.h's AbortFn): a function_ref
// to it stays valid as long as the executor.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLBREAKER_H
#define COLLC_RUNTIME_NCCL_NCCLBREAKER_H

#include "runtime/nccl/BrokenState.h"
#include "runtime/nccl/NcclGraphs.h"
#include "runtime/nccl/NcclResources.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <mutex>
#include <string>

namespace collc::rt::nccl {

class NcclBreaker {
public:
  NcclBreaker(NcclResources &R, NcclGraphs &Graphs) : R(R), Graphs(Graphs) {}
  NcclBreaker(const NcclBreaker &) = delete;
  NcclBreaker &operator=(const NcclBreaker &) = delete;

  /// Breaks the executor, once, with \p Why: its graphs, then its
  /// communicators. From any thread.
  void operator()(const std::string &Why);
  bool broken() const;
  /// Success, or the Broken error that refuses \p Verb, in \p Where.
  llvm::Error refusal(const llvm::Twine &Verb, const llvm::Twine &Where) const;
  /// refusal(), after breaking the executor if a communicator is found in
  /// error.
  llvm::Error usable(const llvm::Twine &Verb, const llvm::Twine &Where);
  /// A wait that ran out of the executor's time, or a communicator in
  /// error, leaves NCCL with work it cannot finish: the executor breaks
  /// (the wait has broken it already where it could) and \p E is returned.
  llvm::Error breakOn(llvm::Error E);

private:
  NcclResources &R;
  NcclGraphs &Graphs;
  mutable std::mutex Lock; ///< guards State, and the break
  BrokenState State;
};

} // namespace collc::rt::nccl

#endif
