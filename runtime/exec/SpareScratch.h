//===- runtime/exec/SpareScratch.h - Scratch kept between steps ---*- C++ -*-===//
//
// A communicator's scratch (a peer's part of an all_reduce, a staged
// input), kept from one step to the next: allocating it anew each step
// cost a fresh set of pages (faulted in and zeroed by the kernel) every
// step. A block is handed out again only when no one else holds it, so a
// block an abandoned request may still write (AbandonedMemory.h) or a
// second operation in flight keeps is never shared. Blocks above MaxKept
// are not kept: a communicator does not hold that much between steps.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_SPARESCRATCH_H
#define COLLC_RUNTIME_EXEC_SPARESCRATCH_H

#include "runtime/exec/HostPages.h"

#include <memory>
#include <mutex>

namespace collc::rt {

class SpareScratch {
public:
  /// The largest block kept between steps.
  static constexpr uint64_t MaxKept = uint64_t(64) << 20;

  /// A block of at least \p Bytes, not zeroed (its contents are whatever an
  /// earlier step left); null data() when the memory is not there.
  std::shared_ptr<HostPages> take(uint64_t Bytes) {
    std::lock_guard<std::mutex> Lock(M);
    // use_count under the lock: only take() makes copies of Spare, so one
    // means nobody else holds it now.
    if (Spare && Spare.use_count() == 1 && Spare->size() >= Bytes)
      return Spare;
    auto Block = std::make_shared<HostPages>(Bytes, 64, /*Zero=*/false);
    if (Block->data() && Bytes <= MaxKept && (!Spare || Spare.use_count() == 1))
      Spare = Block;
    return Block;
  }

private:
  std::mutex M;
  std::shared_ptr<HostPages> Spare;
};

} // namespace collc::rt

#endif
