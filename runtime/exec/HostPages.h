//===- runtime/exec/HostPages.h - Host memory for plan buffers -----*- C++ -*-===//
//
// The memory the host backends communicate from: plan buffers and the
// drivers' scratch. A buffer of at least LargeFromBytes sits on LargeBytes
// boundaries, in a mapping of its own, and asks the kernel for transparent
// huge pages (MADV_HUGEPAGE), as PyTorch's CPU allocator does from 2 MiB
// when C10_THP_MEM_ALLOC_ENABLE is set. A mapping of its own because the
// advice holds only for pages not yet faulted in: memory malloc had before
// comes back on the small pages it had (a 4 MiB buffer allocated after
// the bench's 4 MiB rows did). Open MPI moves a large message between
// two processes of a host with one copy (process_vm_readv), pinning the
// sender's pages one by one and walking the receiver's: in a 2-process C
// prototype of PairAllReduce (4 MiB, in place, median of 200), 2 MiB pages
// took 0.29-0.32 ms a call and 4 KiB pages 0.58-0.69 ms (4 runs of 6
// each; the other runs were slower either way). The advice is only advice:
// where the kernel gives no huge pages (THP "never", none free) the buffer
// is the same memory on small pages.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_HOSTPAGES_H
#define COLLC_RUNTIME_EXEC_HOSTPAGES_H

#include <cstdint>

namespace collc::rt {

/// An owning, aligned block of host memory, zeroed when asked (its pages
/// are then touched at allocation, not during a step). Move-only.
class HostPages {
public:
  /// The transparent huge page of x86-64 (and AArch64 with 4 KiB pages).
  static constexpr uint64_t LargeBytes = uint64_t(2) << 20;
  /// From this size a block asks for huge pages: seven eighths of one, so
  /// that the peer's half of a 4,096,000-byte all_reduce (2,048,004 bytes
  /// of scratch) takes one.
  static constexpr uint64_t LargeFromBytes = LargeBytes - LargeBytes / 8;

  HostPages() = default;
  /// \p Bytes (0 allowed) aligned to \p Align (a power of two, at most
  /// LargeBytes); null data() when the memory is not there.
  HostPages(uint64_t Bytes, uint64_t Align, bool Zero);
  HostPages(HostPages &&O) noexcept;
  HostPages &operator=(HostPages &&O) noexcept;
  HostPages(const HostPages &) = delete;
  HostPages &operator=(const HostPages &) = delete;
  ~HostPages();

  char *data() const { return Data; }
  uint64_t size() const { return Bytes; }
  /// Whether huge pages were asked for (the kernel's answer is its own).
  bool large() const { return Large; }

private:
  char *Data = nullptr;
  uint64_t Bytes = 0;
  /// Of a large block's own mapping (0: from malloc).
  uint64_t MappedBytes = 0;
  bool Large = false;
};

} // namespace collc::rt

#endif
