//===- runtime/shm/TeamLayout.cpp - What a team's segment holds, and where ===//

#include "runtime/shm/TeamLayout.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

using namespace llvm;

namespace collc::rt::shm {

namespace {

/// \p Bytes rounded up to a multiple of 4 KiB, or none on overflow.
Optional<uint64_t> pageAligned(uint64_t Bytes) {
  Optional<uint64_t> Up = checkedAddUnsigned<uint64_t>(Bytes, 4095);
  if (!Up)
    return None;
  return *Up / 4096 * 4096;
}

} // namespace

Expected<uint64_t> TeamLayout::stagingBytes() {
  const char *V = getenv("COLLC_SHM_STAGING_BYTES");
  if (!V)
    return DefaultStagingBytes;
  char *End = nullptr;
  errno = 0;
  unsigned long long B = strtoull(V, &End, 10);
  if (errno || End == V || *End || B < (64 << 10) || B > (uint64_t(1) << 30) || B % (64 << 10))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("COLLC_SHM_STAGING_BYTES '{0}': expected a multiple of 65536 from "
                             "65536 to 1073741824",
                             V));
  return uint64_t(B);
}

uint64_t TeamLayout::channelBytesFor(uint32_t Members) {
  uint64_t Pairs = std::max<uint64_t>(1, uint64_t(Members) * Members);
  return std::clamp<uint64_t>((uint64_t(16) << 20) / Pairs / 64 * 64, 4096, 64 << 10);
}

Expected<TeamLayout> TeamLayout::of(uint32_t Members, uint64_t StagingBytes,
                                    uint64_t ChannelBytes) {
  if (Members == 0 || Members > MaxTeamMembers)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("a team of {0} members (expected 1 to {1})", Members,
                             MaxTeamMembers));
  TeamLayout L;
  L.Members = Members;
  L.StagingBytes = StagingBytes ? StagingBytes : DefaultStagingBytes;
  L.ChannelBytes = ChannelBytes ? ChannelBytes : channelBytesFor(Members);
  if (L.StagingBytes % 64 || L.ChannelBytes % 64)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("staging of {0} and channels of {1} bytes (expected multiples of 64)",
                             L.StagingBytes, L.ChannelBytes));
  uint64_t M = Members;
  // Each part's size, then each part after the one before, page aligned:
  // every product and sum checked.
  Optional<uint64_t> SlotBytes = checkedMulUnsigned<uint64_t>(M, sizeof(MemberSlot));
  Optional<uint64_t> CountBytes = checkedMulUnsigned<uint64_t>(M * 2 * 2 * M, sizeof(uint64_t));
  Optional<uint64_t> ChannelBytesAll = checkedMulUnsigned<uint64_t>(
      M * M, sizeof(ChannelHead) + L.ChannelBytes);
  Optional<uint64_t> StagingAll = checkedMulUnsigned<uint64_t>(M * 2, L.StagingBytes);
  Optional<uint64_t> At = pageAligned(sizeof(TeamHeader));
  auto After = [&](uint64_t &Offset, Optional<uint64_t> Size) {
    if (!At || !Size)
      return false;
    Offset = *At;
    Optional<uint64_t> End = checkedAddUnsigned<uint64_t>(*At, *Size);
    At = End ? pageAligned(*End) : None;
    return bool(At);
  };
  if (!After(L.Slots, SlotBytes) || !After(L.Counts, CountBytes) ||
      !After(L.Channels, ChannelBytesAll) || !After(L.Staging, StagingAll))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("a team of {0} members with {1} bytes of staging each does not fit "
                             "in 64 bits of address",
                             Members, L.StagingBytes));
  L.Bytes = *At;
  return L;
}

} // namespace collc::rt::shm
