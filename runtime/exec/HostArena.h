//===- runtime/exec/HostArena.h - Memory a driver offers for buffers -*- C++ -*-===//
//
// Where a host driver would rather have the executor's buffers live: the
// shared-memory transport (runtime/shm) gives memory every process of the
// host maps, so that a collective reads and writes a plan's buffers where
// they are instead of copying them through staging. The executor asks its
// driver for one after joining its groups (a driver without the hook, or
// whose groups share no memory, gives none, and buffers are HostPages).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_HOSTARENA_H
#define COLLC_RUNTIME_EXEC_HOSTARENA_H

#include "runtime/exec/HostPages.h"

#include <cstdint>
#include <cstring>

namespace collc::rt {

class HostArena {
public:
  virtual ~HostArena() = default;
  /// \p Bytes aligned to \p Align (a power of two), zeroed; null when the
  /// arena cannot give them (the caller then allocates on its own).
  virtual char *take(uint64_t Bytes, uint64_t Align) = 0;
};

/// A buffer of the executor's: in an arena, or on pages of its own.
class HostBlock {
public:
  HostBlock() = default;
  /// From \p Arena when it gives the bytes, else own pages (zeroed).
  HostBlock(HostArena *Arena, uint64_t Bytes, uint64_t Align) {
    if (Arena)
      At = Arena->take(Bytes, alignmentFor(Bytes, Align));
    if (!At)
      Own = HostPages(Bytes, Align, /*Zero=*/true);
    Size = Bytes;
  }
  char *data() const { return At ? At : Own.data(); }
  /// A large block sits on a huge page boundary in an arena too (as
  /// HostPages places it), so that the kernel may give it huge pages.
  static uint64_t alignmentFor(uint64_t Bytes, uint64_t Align) {
    return Bytes >= HostPages::LargeFromBytes ? HostPages::LargeBytes : Align;
  }
  /// The arena bytes a block of \p Bytes aligned to \p Align may take.
  static uint64_t footprint(uint64_t Bytes, uint64_t Align) {
    return Bytes + alignmentFor(Bytes, Align) - 1;
  }
  uint64_t size() const { return Size; }
  /// Whether it lies in the driver's arena.
  bool shared() const { return At != nullptr; }

private:
  char *At = nullptr;
  HostPages Own;
  uint64_t Size = 0;
};

} // namespace collc::rt

#endif
