//===- runtime/shm/PeerWatch.cpp - Whether the host's peers still run --------===//

#include "runtime/shm/PeerWatch.h"

#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

namespace collc::rt::shm {

std::optional<ProcessStat> readProcessStat(int32_t Pid) {
  char Path[64];
  snprintf(Path, sizeof(Path), "/proc/%d/stat", int(Pid));
  FILE *F = fopen(Path, "re");
  if (!F)
    return std::nullopt;
  char Buf[1024];
  size_t N = fread(Buf, 1, sizeof(Buf) - 1, F);
  fclose(F);
  Buf[N] = 0;
  // "pid (comm) S ...": the command may hold spaces and parentheses, so
  // the fields start after the last ')'.
  char *Close = strrchr(Buf, ')');
  if (!Close || Close[1] != ' ' || !Close[2])
    return std::nullopt;
  ProcessStat S;
  S.State = Close[2];
  // Field 22 (starttime) is the 20th after the state.
  char *P = Close + 3;
  for (int Field = 4; Field != 22 && P; ++Field) {
    P = strchr(P, ' ');
    if (P)
      ++P;
  }
  if (!P)
    return std::nullopt;
  S.StartTime = strtoull(P, nullptr, 10);
  return S;
}

PeerWatch::PeerWatch(llvm::ArrayRef<int32_t> Pids) {
  int32_t Me = int32_t(getpid());
  for (int32_t Pid : Pids) {
    Peer P;
    P.Pid = Pid;
    P.Self = Pid == Me;
    if (!P.Self) {
      P.PidFd = int(syscall(SYS_pidfd_open, Pid, 0));
      if (P.PidFd < 0)
        if (std::optional<ProcessStat> S = readProcessStat(Pid))
          P.Started = S->StartTime;
    }
    Peers.push_back(P);
  }
}

PeerWatch::~PeerWatch() {
  for (Peer &P : Peers)
    if (P.PidFd >= 0)
      close(P.PidFd);
}

bool PeerWatch::exited(size_t Index) {
  Peer &P = Peers[Index];
  if (P.Self)
    return false;
  if (P.PidFd >= 0) {
    pollfd Q{P.PidFd, POLLIN, 0};
    return poll(&Q, 1, 0) > 0;
  }
  if (kill(P.Pid, 0) != 0 && errno == ESRCH)
    return true;
  // The pid may name a later process: compare start times where known.
  if (P.Started) {
    std::optional<ProcessStat> S = readProcessStat(P.Pid);
    return !S || S->StartTime != *P.Started || S->State == 'Z' || S->State == 'X';
  }
  return false;
}

std::optional<std::string> PeerWatch::lost(size_t Index, std::chrono::steady_clock::time_point Now) {
  Peer &P = Peers[Index];
  if (P.Self)
    return std::nullopt;
  if (exited(Index))
    return llvm::formatv("its process (pid {0}) has exited", P.Pid).str();
  std::optional<ProcessStat> S = readProcessStat(P.Pid);
  // A zombie has exited and awaits its parent.
  if (S && (S->State == 'Z' || S->State == 'X'))
    return llvm::formatv("its process (pid {0}) has exited", P.Pid).str();
  if (!S || S->State != 'T') {
    P.StoppedSince.reset();
    return std::nullopt;
  }
  if (!P.StoppedSince)
    P.StoppedSince = Now;
  auto For = Now - *P.StoppedSince;
  if (For < StopGrace)
    return std::nullopt;
  return llvm::formatv("its process (pid {0}) has been stopped by a signal (SIGSTOP or SIGTSTP) "
                       "for {1:f1} s",
                       P.Pid, std::chrono::duration<double>(For).count())
      .str();
}

} // namespace collc::rt::shm
