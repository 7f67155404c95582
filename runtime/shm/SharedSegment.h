//===- runtime/shm/SharedSegment.h - Memory the processes of a host share -*- C++ -*-===//
//
// A segment is an anonymous memory file (memfd_create): it has no name in
// /dev/shm or anywhere else, so nothing is left behind by any exit,
// SIGKILL included; the kernel frees it when the last process that maps it
// or holds its descriptor goes. Its creator makes it owner-only (0600) and
// seals its size (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL): a peer that
// shrank it would make every other process's next access a SIGBUS. The
// others receive its descriptor over a Unix socket (SegmentHandout.h) and
// adopt it only when it is a memory file of this user, of the agreed size,
// with those seals.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_SHAREDSEGMENT_H
#define COLLC_RUNTIME_SHM_SHAREDSEGMENT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace collc::rt::shm {

class SharedSegment {
public:
  /// A new segment of \p Bytes (zeroed), mapped; \p Purpose names it in
  /// errors and in /proc/PID/maps ("collc team 'world'").
  static llvm::Expected<SharedSegment> create(uint64_t Bytes, llvm::StringRef Purpose);
  /// Maps the segment behind \p Fd (taken over, closed on every path), once
  /// it checks out: a sealed memory file of this user, of exactly \p Bytes.
  static llvm::Expected<SharedSegment> adopt(int Fd, uint64_t Bytes, llvm::StringRef Purpose);

  SharedSegment() = default;
  SharedSegment(SharedSegment &&O) noexcept { *this = std::move(O); }
  SharedSegment &operator=(SharedSegment &&O) noexcept;
  SharedSegment(const SharedSegment &) = delete;
  SharedSegment &operator=(const SharedSegment &) = delete;
  ~SharedSegment();

  char *data() const { return Base; }
  uint64_t size() const { return Bytes; }
  /// The descriptor to hand out (-1 once closed).
  int fd() const { return Fd; }
  /// Closes the descriptor: the mapping stays. Once every member holds
  /// the segment, no descriptor of it needs to live.
  void closeDescriptor();

private:
  /// Maps all \p Size bytes of the descriptor, read-write and shared.
  llvm::Error map(uint64_t Size, llvm::StringRef Purpose);
  char *Base = nullptr;
  uint64_t Bytes = 0;
  int Fd = -1;
};

} // namespace collc::rt::shm

#endif
