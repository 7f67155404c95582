//===- runtime/launch/WorldGather.h - One all-gather over a run's world -*- C++ -*-===//
//
// What a process of a multi-process run needs from its CPU world when no
// host executor holds one (the nccl backend: the unique-id exchange before
// its communicators exist, and the ranks' figures after the run): an
// all-gather of words. The mpi and gloo backends each offer their world as
// one (runtime/mpi/MpiWorld.h, runtime/gloo/GlooWorld.h), so that a layer
// that must not depend on either (runtime/nccl) can use whichever the run's
// rendezvous names.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LAUNCH_WORLDGATHER_H
#define COLLC_RUNTIME_LAUNCH_WORLDGATHER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace collc::rt {

class WorldGather {
public:
  virtual ~WorldGather();
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  /// Every rank's \p Local, concatenated in rank order. Every rank passes
  /// the same number of words; the wait is bounded by the world's timeout
  /// and its error names the rank that did not arrive.
  virtual llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Local) = 0;
};

/// Every rank's \p Local, which may differ in length from rank to rank:
/// the lengths are gathered first, then the words padded to the longest.
/// Element R of the result is rank R's contribution.
llvm::Expected<std::vector<std::vector<uint32_t>>> allGatherRagged(WorldGather &W,
                                                                   llvm::ArrayRef<uint32_t> Local);

} // namespace collc::rt

#endif
