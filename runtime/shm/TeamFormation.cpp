//===- runtime/shm/TeamFormation.cpp - A team, and an arena, from a group ----===//

#include "runtime/shm/TeamFormation.h"

#include "runtime/exec/HostPages.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace llvm;

namespace collc::rt::shm {

Expected<std::shared_ptr<ShmTeam>> formTeam(const GroupHosts &H, StringRef Group,
                                            GatherWords Gather, Deadline By) {
  Expected<uint64_t> Staging = TeamLayout::stagingBytes();
  if (!Staging)
    return Staging.takeError();
  Expected<TeamLayout> L = TeamLayout::of(uint32_t(H.Local.size()), *Staging);
  if (!L)
    return L.takeError();
  std::string Purpose = formatv("team of group '{0}' on {1}", Group, H.HostName).str();
  auto Init = [&](char *Base, const Nonce &N) {
    auto *Hd = new (Base) TeamHeader();
    Hd->Magic = TeamMagic;
    Hd->Version = TeamVersion;
    Hd->Members = L->Members;
    Hd->Nonce[0] = N[0];
    Hd->Nonce[1] = N[1];
    Hd->Bytes = L->Bytes;
    Hd->StagingBytes = L->StagingBytes;
    Hd->ChannelBytes = L->ChannelBytes;
  };
  auto Check = [&](const char *Base, const Nonce &N) -> Error {
    // Plain reads of what the creator wrote (the peers have not started).
    const TeamHeader &Hd = *reinterpret_cast<const TeamHeader *>(Base);
    if (Hd.Magic == TeamMagic && Hd.Version == TeamVersion && Hd.Members == L->Members &&
        Hd.Nonce[0] == N[0] && Hd.Nonce[1] == N[1] && Hd.Bytes == L->Bytes &&
        Hd.StagingBytes == L->StagingBytes && Hd.ChannelBytes == L->ChannelBytes)
      return Error::success();
    return makeError(ErrorKind::Backend,
                     formatv("{0}: the segment's header (version {1}, {2} members, {3} bytes) is "
                             "not the one agreed (version {4}, {5} members, {6} bytes, this "
                             "handout's nonce): a foreign or corrupt segment, refused",
                             Purpose, Hd.Version, Hd.Members, Hd.Bytes, TeamVersion, L->Members,
                             L->Bytes));
  };
  Expected<HostSegment> S = shareHostSegment(H, L->Bytes, Purpose, Gather, By, Init, Check);
  if (!S)
    return S.takeError();
  if (!S->Seg)
    return nullptr;
  std::vector<ShmTeam::Member> Members;
  for (int32_t R : H.Local)
    Members.push_back({R, H.Pids[R]});
  return std::make_shared<ShmTeam>(Group.str(), H.LocalIndex, std::move(Members),
                                   std::move(*S->Seg), *L, H.Oversubscribed);
}

Expected<std::shared_ptr<SharedArena>> shareArena(const GroupHosts &H, uint64_t Bytes,
                                                  StringRef Group, GatherWords Gather,
                                                  Deadline By) {
  uint32_t Mine[2] = {uint32_t(Bytes), uint32_t(Bytes >> 32)};
  Expected<std::vector<uint32_t>> All = Gather(Mine);
  if (!All)
    return All.takeError();
  if (All->size() != size_t(H.Size) * 2)
    return makeError(ErrorKind::Backend, formatv("group '{0}': the arena sizes' gather returned "
                                                 "{1} words",
                                                 Group, All->size()));
  // Each host's members' regions, in group rank order, each on a huge page
  // boundary (so each may take huge pages). Every host's total is checked
  // here, on every member alike: a size too large anywhere fails the whole
  // group before the segment's gathers, which no member then skips.
  std::vector<uint64_t> Totals(H.Hosts, 0);
  uint64_t Begin = 0, End = 0;
  for (int32_t R = 0; R != H.Size; ++R) {
    uint64_t Want = uint64_t((*All)[2 * R]) | uint64_t((*All)[2 * R + 1]) << 32;
    // HostOf is this member's own numbering (meetHosts), below H.Hosts.
    uint64_t &Total = Totals[H.HostOf[size_t(R)]];
    Optional<uint64_t> Up = checkedAddUnsigned<uint64_t>(Want, HostPages::LargeBytes - 1);
    Optional<uint64_t> Next = Up ? checkedAddUnsigned<uint64_t>(
                                       Total, *Up / HostPages::LargeBytes * HostPages::LargeBytes)
                                 : None;
    if (!Next)
      return makeError(ErrorKind::InvalidArgument,
                       formatv("group '{0}': rank {1} asks for an arena of {2} bytes: too large",
                               Group, R, Want),
                       int64_t(R));
    if (R == H.Rank) {
      Begin = Total;
      End = Total + Want;
    }
    Total = *Next;
  }
  uint64_t Total = Totals[H.HostOf[size_t(H.Rank)]];
  std::string Purpose = formatv("arena of group '{0}' on {1}", Group, H.HostName).str();
  Expected<HostSegment> S = shareHostSegment(
      H, std::max<uint64_t>(Total, 1), Purpose, Gather, By, [](char *, const Nonce &) {},
      [](const char *, const Nonce &) { return Error::success(); });
  if (!S)
    return S.takeError();
  if (!S->Seg)
    return nullptr;
  std::vector<int32_t> Pids;
  for (int32_t R : H.Local)
    Pids.push_back(H.Pids[R]);
  // Never 0: a post's arena 0 is its staging buffer.
  uint64_t Id = (S->N[0] ^ S->N[1]) | 1;
  return std::make_shared<SharedArena>(Id, std::move(*S->Seg), std::move(Pids), Begin, End);
}

} // namespace collc::rt::shm
