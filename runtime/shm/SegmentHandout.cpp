//===- runtime/shm/SegmentHandout.cpp - Passing a segment to the host's peers ===//

#include "runtime/shm/SegmentHandout.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/shm/PeerWatch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::shm {

namespace {

Error sysError(StringRef Purpose, const Twine &What, int Errno) {
  return makeError(ErrorKind::Backend,
                   formatv("{0}: {1} failed: {2}", Purpose, What.str(), strerror(Errno)));
}

/// The abstract address of \p N for this user, and its length.
std::pair<sockaddr_un, socklen_t> addressOf(const Nonce &N) {
  sockaddr_un A;
  std::memset(&A, 0, sizeof(A));
  A.sun_family = AF_UNIX;
  std::string Name = formatv("collc-shm-{0}-{1:x-16}{2:x-16}", geteuid(), N[0], N[1]).str();
  // sun_path[0] == 0: the abstract namespace (no file).
  std::memcpy(A.sun_path + 1, Name.data(), Name.size());
  return {A, socklen_t(offsetof(sockaddr_un, sun_path) + 1 + Name.size())};
}

/// The peer's credentials, checked to be this user's.
Expected<ucred> peerOf(int Fd, StringRef Purpose) {
  ucred C;
  socklen_t Len = sizeof(C);
  if (getsockopt(Fd, SOL_SOCKET, SO_PEERCRED, &C, &Len) != 0)
    return sysError(Purpose, "reading the peer's credentials", errno);
  return C;
}

int millisUntil(Deadline By) {
  auto Left = std::chrono::duration_cast<std::chrono::milliseconds>(
      By - std::chrono::steady_clock::now());
  return int(std::clamp<int64_t>(Left.count(), 0, 100));
}

} // namespace

Expected<Nonce> randomNonce() {
  Nonce N;
  char *P = reinterpret_cast<char *>(N.data());
  size_t Got = 0;
  while (Got < sizeof(N)) {
    ssize_t R = getrandom(P + Got, sizeof(N) - Got, 0);
    if (R < 0 && errno == EINTR)
      continue;
    if (R <= 0)
      return makeError(ErrorKind::Backend,
                       formatv("no random nonce for a shared segment: getrandom: {0}",
                               strerror(errno)));
    Got += size_t(R);
  }
  return N;
}

SegmentServer::~SegmentServer() {
  if (Fd >= 0)
    close(Fd);
}

Expected<SegmentServer> SegmentServer::listen(const Nonce &N, StringRef Purpose) {
  int Fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (Fd < 0)
    return sysError(Purpose, "socket", errno);
  SegmentServer S(Fd, Purpose.str());
  auto [Addr, Len] = addressOf(N);
  if (bind(Fd, reinterpret_cast<sockaddr *>(&Addr), Len) != 0)
    return sysError(Purpose, "binding the handout socket", errno);
  if (::listen(Fd, 64) != 0)
    return sysError(Purpose, "listen", errno);
  return S;
}

Error SegmentServer::handOut(int SegmentFd, ArrayRef<int32_t> Pids, Deadline By,
                             function_ref<int64_t(int32_t)> RankOf) {
  SmallVector<int32_t, 16> Waiting(Pids.begin(), Pids.end());
  while (!Waiting.empty()) {
    if (std::chrono::steady_clock::now() >= By) {
      std::string Names;
      for (int32_t P : Waiting)
        Names += formatv("{0}rank {1} (pid {2})", Names.empty() ? "" : ", ", RankOf(P), P).str();
      return makeError(ErrorKind::Timeout,
                       formatv("{0}: {1} did not come for the shared segment", Purpose, Names),
                       RankOf(Waiting.front()));
    }
    pollfd P{Fd, POLLIN, 0};
    if (poll(&P, 1, millisUntil(By)) <= 0)
      continue;
    int Conn = accept4(Fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (Conn < 0)
      continue; // gone before we took it, or EAGAIN
    Expected<ucred> Who = peerOf(Conn, Purpose);
    auto It = Who ? llvm::find(Waiting, Who->pid) : Waiting.end();
    if (!Who)
      consumeError(Who.takeError());
    if (It == Waiting.end() || Who->uid != geteuid()) {
      close(Conn); // not one of ours, or served already
      continue;
    }
    char Byte = 'S';
    iovec Io{&Byte, 1};
    alignas(cmsghdr) char Control[CMSG_SPACE(sizeof(int))];
    std::memset(Control, 0, sizeof(Control));
    msghdr M{};
    M.msg_iov = &Io;
    M.msg_iovlen = 1;
    M.msg_control = Control;
    M.msg_controllen = sizeof(Control);
    cmsghdr *C = CMSG_FIRSTHDR(&M);
    C->cmsg_level = SOL_SOCKET;
    C->cmsg_type = SCM_RIGHTS;
    C->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(C), &SegmentFd, sizeof(int));
    ssize_t Sent = sendmsg(Conn, &M, MSG_NOSIGNAL);
    close(Conn);
    if (Sent == 1)
      Waiting.erase(It);
  }
  return Error::success();
}

Expected<int> receiveSegment(const Nonce &N, int32_t ServerPid, int64_t ServerRank, Deadline By,
                             StringRef Purpose) {
  auto [Addr, Len] = addressOf(N);
  int Fd = -1;
  auto Creator = [&] { return formatv("the segment's creator, rank {0} (pid {1}),", ServerRank,
                                      ServerPid)
                           .str(); };
  // The server listens before it hands out the nonce: a refusal here is a
  // server that is gone (said at once), or one not yet scheduled.
  while (true) {
    Fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (Fd < 0)
      return sysError(Purpose, "socket", errno);
    if (connect(Fd, reinterpret_cast<sockaddr *>(&Addr), Len) == 0)
      break;
    int Errno = errno;
    close(Fd);
    std::optional<ProcessStat> S = readProcessStat(ServerPid);
    if (!S || S->State == 'Z' || S->State == 'X')
      return makeError(ErrorKind::PeerLost,
                       formatv("{0}: {1} has exited", Purpose, Creator()), ServerRank);
    if (std::chrono::steady_clock::now() >= By)
      return makeError(ErrorKind::Timeout,
                       formatv("{0}: connecting to {1} failed: {2}", Purpose, Creator(),
                               strerror(Errno)),
                       ServerRank);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  auto Closer = make_scope_exit([&] { close(Fd); });
  Expected<ucred> Who = peerOf(Fd, Purpose);
  if (!Who)
    return Who.takeError();
  if (Who->pid != ServerPid || Who->uid != geteuid())
    return makeError(ErrorKind::Backend,
                     formatv("{0}: the handout socket is held by pid {1} of user {2}, not the "
                             "segment's creator, rank {3} (pid {4} of user {5}): refused",
                             Purpose, Who->pid, Who->uid, ServerRank, ServerPid, geteuid()),
                     ServerRank);
  pollfd P{Fd, POLLIN, 0};
  while (true) {
    int R = poll(&P, 1, millisUntil(By));
    if (R > 0)
      break;
    if (std::chrono::steady_clock::now() >= By)
      return makeError(ErrorKind::Timeout,
                       formatv("{0}: {1} did not hand it out in time", Purpose, Creator()),
                       ServerRank);
  }
  char Byte = 0;
  iovec Io{&Byte, 1};
  alignas(cmsghdr) char Control[CMSG_SPACE(sizeof(int) * 4)];
  msghdr M{};
  M.msg_iov = &Io;
  M.msg_iovlen = 1;
  M.msg_control = Control;
  M.msg_controllen = sizeof(Control);
  ssize_t Got = recvmsg(Fd, &M, MSG_CMSG_CLOEXEC);
  if (Got < 0)
    return sysError(Purpose, "receiving the segment", errno);
  int Received = -1;
  for (cmsghdr *C = CMSG_FIRSTHDR(&M); C; C = CMSG_NXTHDR(&M, C)) {
    if (C->cmsg_level != SOL_SOCKET || C->cmsg_type != SCM_RIGHTS)
      continue;
    size_t Count = (C->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t I = 0; I != Count; ++I) {
      int One;
      std::memcpy(&One, CMSG_DATA(C) + I * sizeof(int), sizeof(int));
      if (Received < 0)
        Received = One;
      else
        close(One); // one descriptor was agreed; more are not kept
    }
  }
  if (Got != 1 || Received < 0 || (M.msg_flags & MSG_CTRUNC)) {
    if (Received >= 0)
      close(Received);
    return makeError(ErrorKind::Backend, formatv("{0}: {1} sent no segment", Purpose, Creator()),
                     ServerRank);
  }
  return Received;
}

} // namespace collc::rt::shm
