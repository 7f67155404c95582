//===- runtime/exec/HostPages.cpp - Host memory for plan buffers ----------===//

#include "runtime/exec/HostPages.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

// AddressSanitizer sees a block of malloc's whole, but not one of mmap's:
// the rounded tail of a large block is poisoned, so that an overrun past
// its bytes is caught as one past a small block's is.
#if defined(__SANITIZE_ADDRESS__)
#define COLLC_HOSTPAGES_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COLLC_HOSTPAGES_ASAN 1
#endif
#endif
#ifdef COLLC_HOSTPAGES_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace collc::rt {

namespace {

uint64_t roundUp(uint64_t N, uint64_t To) { return (N + To - 1) / To * To; }

/// Fresh anonymous memory of \p Size bytes on a \p Align boundary (the
/// head and tail of a larger mapping given back); null when there is none.
char *mapAligned(uint64_t Size, uint64_t Align) {
  assert(Size % uint64_t(::sysconf(_SC_PAGESIZE)) == 0 && "the tail is unmapped by whole pages");
  if (Size > UINT64_MAX - Align)
    return nullptr;
  uint64_t Mapped = Size + Align;
  void *M = ::mmap(nullptr, Mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (M == MAP_FAILED)
    return nullptr;
  auto Base = reinterpret_cast<uintptr_t>(M);
  uintptr_t First = roundUp(Base, Align), End = First + Size;
  if (First > Base)
    ::munmap(M, First - Base);
  if (Base + Mapped > End)
    ::munmap(reinterpret_cast<void *>(End), Base + Mapped - End);
  return reinterpret_cast<char *>(First);
}

} // namespace

HostPages::HostPages(uint64_t Bytes, uint64_t Align, bool Zero) : Bytes(Bytes) {
  uint64_t Want = std::max<uint64_t>(Bytes, 1);
  if (Want > UINT64_MAX - 2 * LargeBytes || Align > LargeBytes)
    return;
  Large = Bytes >= LargeFromBytes;
  if (!Large) {
    void *P = nullptr;
    if (posix_memalign(&P, std::max<uint64_t>(Align, sizeof(void *)), Want) != 0)
      return;
    Data = static_cast<char *>(P);
    if (Zero)
      std::memset(Data, 0, Want);
    return;
  }
  // A mapping of its own, never memory malloc had before: the huge page
  // advice holds only for pages not yet faulted in, and a block freed to
  // malloc's heap comes back on the small pages it had.
  uint64_t Page = uint64_t(::sysconf(_SC_PAGESIZE));
  uint64_t Size = roundUp(Want, Page);
  // The kernel backs only whole huge pages: the block is rounded up to
  // them where that adds at most an eighth of one (so a block of
  // LargeFromBytes takes one); a larger tail stays on small pages.
  if (uint64_t Whole = roundUp(Want, LargeBytes); Whole - Want <= LargeBytes / 8)
    Size = Whole;
  Data = mapAligned(Size, LargeBytes);
  if (!Data) {
    Large = false;
    return;
  }
  MappedBytes = Size;
#ifdef MADV_HUGEPAGE
  // Before the first touch, so that the pages come huge; a refusal
  // (EINVAL where THP is not built in) leaves small pages.
  (void)::madvise(Data, Size, MADV_HUGEPAGE);
#endif
  // Fresh mappings read as zero; writing touches the pages now.
  if (Zero)
    std::memset(Data, 0, Size);
#ifdef COLLC_HOSTPAGES_ASAN
  ASAN_POISON_MEMORY_REGION(Data + Want, Size - Want);
#endif
}

HostPages::HostPages(HostPages &&O) noexcept
    : Data(std::exchange(O.Data, nullptr)), Bytes(std::exchange(O.Bytes, 0)),
      MappedBytes(std::exchange(O.MappedBytes, 0)), Large(std::exchange(O.Large, false)) {}

HostPages &HostPages::operator=(HostPages &&O) noexcept {
  std::swap(Data, O.Data);
  std::swap(Bytes, O.Bytes);
  std::swap(MappedBytes, O.MappedBytes);
  std::swap(Large, O.Large);
  return *this;
}

HostPages::~HostPages() {
  if (MappedBytes) {
#ifdef COLLC_HOSTPAGES_ASAN
    // The addresses go back to the kernel, and may come back through malloc.
    ASAN_UNPOISON_MEMORY_REGION(Data, MappedBytes);
#endif
    ::munmap(Data, MappedBytes);
  } else
    std::free(Data);
}

} // namespace collc::rt
