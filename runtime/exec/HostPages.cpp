//===- runtime/exec/HostPages.cpp - Host memory for plan buffers ----------===//

#include "runtime/exec/HostPages.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <utility>

namespace collc::rt {

namespace {

uint64_t roundUp(uint64_t N, uint64_t To) { return (N + To - 1) / To * To; }

/// Fresh anonymous memory of \p Size bytes on a \p Align boundary (the
/// head and tail of a larger mapping given back); null when there is none.
char *mapAligned(uint64_t Size, uint64_t Align) {
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
  // them where that adds at most an eighth; a larger tail stays on small
  // pages.
  if (uint64_t Whole = roundUp(Want, LargeBytes); Whole - Want <= Want / 8)
    Size = Whole;
  Data = mapAligned(Size, LargeBytes);
  if (!Data)
    return;
  MappedBytes = Size;
#ifdef MADV_HUGEPAGE
  // Before the first touch, so that the pages come huge; a refusal
  // (EINVAL where THP is not built in) leaves small pages.
  (void)::madvise(Data, Size, MADV_HUGEPAGE);
#endif
  // Fresh mappings read as zero; writing touches the pages now.
  if (Zero)
    std::memset(Data, 0, Size);
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
  if (MappedBytes)
    ::munmap(Data, MappedBytes);
  else
    std::free(Data);
}

} // namespace collc::rt
