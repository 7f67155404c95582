//===- runtime/exec/SpareScratch.h - Scratch kept between steps ---*- C++ -*-===//
//
// A communicator's scratch (a peer's part of an all_reduce, a staged
// input), kept from one step to the next: allocating it anew each step
// cost a fresh set of pages (faulted in and zeroed by the kernel) every
// step. A block comes back to be handed out again when its last holder
// lets go, under the lock that hands it out, so the next holder's writes
// follow the last one's. A block an abandoned request may still write
// (AbandonedMemory.h) is never let go, so never reused. One free block is
// kept, the largest up to MaxKept: at most that much per communicator,
// for as long as any block of it lives.
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
    std::unique_ptr<HostPages> Block;
    {
      std::lock_guard<std::mutex> Lock(S->M);
      if (S->Free && S->Free->size() >= Bytes)
        Block = std::move(S->Free);
    }
    if (!Block)
      Block = std::make_unique<HostPages>(Bytes, 64, /*Zero=*/false);
    if (!Block->data())
      return std::shared_ptr<HostPages>(std::move(Block));
    // The deleter holds the free list, which thus outlives the group when
    // a block does.
    return std::shared_ptr<HostPages>(Block.release(), [S = S](HostPages *P) {
      std::unique_ptr<HostPages> Back(P);
      if (P->size() > MaxKept)
        return;
      std::lock_guard<std::mutex> Lock(S->M);
      if (!S->Free || S->Free->size() < P->size())
        std::swap(S->Free, Back); // the smaller goes
    });
  }

private:
  struct State {
    std::mutex M;
    std::unique_ptr<HostPages> Free;
  };
  std::shared_ptr<State> S = std::make_shared<State>();
};

} // namespace collc::rt

#endif
