//===- runtime/shm/HostMeeting.cpp - Where a group's processes are ---------===//

#include "runtime/shm/HostMeeting.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/shm/HostIdentity.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <bit>
#include <sched.h>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::shm {

namespace {

/// What each member tells in step 1.
enum Word { TagLo, TagHi, KeyLo, KeyHi, Pid, Mode, MaskLo, MaskHi, WordsPerMember };

/// This process's CPUs folded into 64 bits (CPU c sets bit c % 64): the
/// union over a host's members counts the CPUs they share (exactly, up to
/// 64 CPUs).
uint64_t cpuMask() {
  cpu_set_t Set;
  if (sched_getaffinity(0, sizeof(Set), &Set) != 0)
    return ~uint64_t(0);
  uint64_t M = 0;
  for (int C = 0; C != CPU_SETSIZE; ++C)
    if (CPU_ISSET(C, &Set))
      M |= uint64_t(1) << (C % 64);
  return M;
}

uint64_t wide(const std::vector<uint32_t> &W, size_t At) {
  return uint64_t(W[At]) | uint64_t(W[At + 1]) << 32;
}

} // namespace

uint32_t GroupHosts::membersPerHost() const {
  SmallVector<uint32_t, 8> Count(Hosts, 0);
  for (uint32_t H : HostOf)
    ++Count[H];
  return !Count.empty() && is_splat(Count) ? Count.front() : 0;
}

Expected<GroupHosts> meetHosts(StringRef Group, GatherWords Gather) {
  Expected<Transport> Chosen = processTransport();
  if (!Chosen)
    return Chosen.takeError();
  Expected<Nonce> Tag = randomNonce();
  if (!Tag)
    return Tag.takeError();
  HostIdentity Me = thisHost();
  uint64_t Mask = cpuMask();
  uint32_t Mine[WordsPerMember] = {uint32_t((*Tag)[0]), uint32_t((*Tag)[0] >> 32),
                                   uint32_t(Me.Key),    uint32_t(Me.Key >> 32),
                                   uint32_t(getpid()),  uint32_t(*Chosen),
                                   uint32_t(Mask),      uint32_t(Mask >> 32)};
  Expected<std::vector<uint32_t>> All = Gather(Mine);
  if (!All)
    return All.takeError();
  if (All->empty() || All->size() % WordsPerMember)
    return makeError(ErrorKind::Backend,
                     formatv("group '{0}': the hosts' gather returned {1} words, not {2} a member",
                             Group, All->size(), unsigned(WordsPerMember)));
  GroupHosts H;
  H.Size = int(All->size() / WordsPerMember);
  H.Rank = -1;
  H.HostName = Me.Name;
  H.Mode = *Chosen;
  SmallVector<uint64_t, 8> Keys;
  uint64_t Cpus = 0;
  for (int R = 0; R != H.Size; ++R) {
    size_t At = size_t(R) * WordsPerMember;
    if (wide(*All, At + TagLo) == (*Tag)[0])
      H.Rank = R;
    uint64_t Key = wide(*All, At + KeyLo);
    auto Known = find(Keys, Key);
    H.HostOf.push_back(uint32_t(Known - Keys.begin()));
    if (Known == Keys.end())
      Keys.push_back(Key);
    H.Pids.push_back(int32_t((*All)[At + Pid]));
    if (Key == Me.Key) {
      H.Local.push_back(R);
      Cpus |= wide(*All, At + MaskLo);
    }
    uint32_t TheirMode = (*All)[At + Mode];
    if (TheirMode != uint32_t(*Chosen))
      return makeError(ErrorKind::InvalidArgument,
                       formatv("group '{0}': this process uses transport {1}, rank {2} uses {3} "
                               "(--transport or {4} differ: every process must choose alike)",
                               Group, transportName(*Chosen), R,
                               TheirMode <= uint32_t(Transport::Engine)
                                   ? transportName(Transport(TheirMode)).str()
                                   : formatv("#{0}", TheirMode).str(),
                               TransportVariable));
  }
  if (H.Rank < 0)
    return makeError(ErrorKind::Backend,
                     formatv("group '{0}': this process is not among the {1} members the hosts' "
                             "gather returned",
                             Group, H.Size));
  H.Hosts = uint32_t(Keys.size());
  H.LocalIndex = uint32_t(find(H.Local, H.Rank) - H.Local.begin());
  H.Oversubscribed = H.Local.size() > size_t(std::popcount(Cpus));
  return H;
}

Expected<HostSegment> shareHostSegment(const GroupHosts &H, uint64_t Bytes, StringRef Purpose,
                                       GatherWords Gather, Deadline By,
                                       function_ref<void(char *, const Nonce &)> Init,
                                       function_ref<Error(const char *, const Nonce &)> Check) {
  bool Alone = H.Local.size() == 1, Creates = !Alone && H.LocalIndex == 0;
  // What went wrong on this member, told to the others by the last gather.
  Error Mine = Error::success();
  HostSegment Out;
  std::optional<SharedSegment> Created;
  std::optional<SegmentServer> Server;
  if (Creates) {
    Mine = [&]() -> Error {
      Expected<Nonce> N = randomNonce();
      if (!N)
        return N.takeError();
      Expected<SharedSegment> S = SharedSegment::create(Bytes, Purpose);
      if (!S)
        return S.takeError();
      Expected<SegmentServer> L = SegmentServer::listen(*N, Purpose);
      if (!L)
        return L.takeError();
      Out.N = *N;
      Init(S->data(), *N);
      Created = std::move(*S);
      Server.emplace(std::move(*L));
      return Error::success();
    }();
  }
  // The creators' nonces (and whether each has one).
  uint32_t Offer[5] = {Server ? 1u : 0u, uint32_t(Out.N[0]), uint32_t(Out.N[0] >> 32),
                       uint32_t(Out.N[1]), uint32_t(Out.N[1] >> 32)};
  Expected<std::vector<uint32_t>> Offers = Gather(Offer);
  if (!Offers)
    return joinErrors(std::move(Mine), Offers.takeError());
  if (Offers->size() != size_t(H.Size) * 5)
    return joinErrors(std::move(Mine),
                      makeError(ErrorKind::Backend,
                                formatv("{0}: the nonces' gather returned {1} words", Purpose,
                                        Offers->size())));
  if (Server) {
    SmallVector<int32_t, 8> Peers;
    for (int32_t R : H.Local)
      if (R != H.Rank)
        Peers.push_back(H.Pids[R]);
    auto RankOf = [&](int32_t Pid) -> int64_t {
      for (int32_t R : H.Local)
        if (H.Pids[R] == Pid)
          return R;
      return -1;
    };
    if (Error E = Server->handOut(Created->fd(), Peers, By, RankOf))
      Mine = std::move(E);
    Out.Seg = std::move(Created);
  } else if (!Alone && !Mine) {
    size_t At = size_t(H.Local[0]) * 5;
    if (!(*Offers)[At]) {
      Mine = makeError(ErrorKind::Backend,
                       formatv("{0}: rank {1}, the first on this host, has no segment to share "
                               "(its own error says why)",
                               Purpose, H.Local[0]));
    } else {
      Out.N = {wide(*Offers, At + 1), wide(*Offers, At + 3)};
      Mine = [&]() -> Error {
        Expected<int> Fd = receiveSegment(Out.N, H.Pids[H.Local[0]], H.Local[0], By, Purpose);
        if (!Fd)
          return Fd.takeError();
        Expected<SharedSegment> S = SharedSegment::adopt(*Fd, Bytes, Purpose);
        if (!S)
          return S.takeError();
        if (Error E = Check(S->data(), Out.N))
          return E;
        Out.Seg = std::move(*S);
        return Error::success();
      }();
    }
  }
  // All hold their host's segment, or all give up.
  uint32_t Failed = Mine ? 1u : 0u;
  Expected<std::vector<uint32_t>> Verdicts = Gather(ArrayRef<uint32_t>(Failed));
  if (!Verdicts)
    return joinErrors(std::move(Mine), Verdicts.takeError());
  if (Mine)
    return Mine;
  for (size_t R = 0; R != Verdicts->size(); ++R)
    if ((*Verdicts)[R])
      return makeError(ErrorKind::Backend,
                       formatv("{0}: rank {1} could not take its part (its own error says why)",
                               Purpose, R),
                       int64_t(R));
  // Every member maps its host's segment: no descriptor needs to live.
  if (Out.Seg)
    Out.Seg->closeDescriptor();
  return Out;
}

} // namespace collc::rt::shm
