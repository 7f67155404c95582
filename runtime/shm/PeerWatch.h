//===- runtime/shm/PeerWatch.h - Whether the host's peers still run -*- C++ -*-===//
//
// A rank waiting on shared memory cannot learn from a missing write alone
// that the peer it waits for is gone: the write is as missing while the
// peer computes. So it watches the peers' processes: a pidfd per peer
// (pidfd_open, Linux 5.3; it becomes readable when the process ends, and
// cannot name a later process that reuses the pid), falling back to
// kill(pid, 0) with the process's start time from /proc where pidfds are
// refused; and /proc/PID/stat's state, where a process stopped by a signal
// (SIGSTOP, SIGTSTP) reads 'T'. A peer stopped for StopGrace while it is
// awaited counts as lost: a run stopped as a whole (a suspended job) has
// nobody waiting. A peer stopped by a debugger reads 't' and is waited
// for.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_PEERWATCH_H
#define COLLC_RUNTIME_SHM_PEERWATCH_H

#include "llvm/ADT/ArrayRef.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collc::rt::shm {

class PeerWatch {
public:
  /// How long an awaited peer may stay stopped before it counts as lost.
  static constexpr std::chrono::milliseconds StopGrace{1000};

  /// Watches the processes \p Pids (this process's own pid among them is
  /// never lost).
  explicit PeerWatch(llvm::ArrayRef<int32_t> Pids);
  ~PeerWatch();
  PeerWatch(const PeerWatch &) = delete;
  PeerWatch &operator=(const PeerWatch &) = delete;

  /// Why peer \p Index is lost ("its process (pid 4242) has exited", "its
  /// process (pid 4242) has been stopped (SIGSTOP?) for 1.0 s"), or
  /// nothing while it runs. Reads /proc for the stopped state: call it for
  /// the peers awaited, at most every few milliseconds.
  std::optional<std::string> lost(size_t Index, std::chrono::steady_clock::time_point Now);
  /// Only whether peer \p Index has exited (one poll(2): cheap).
  bool exited(size_t Index);
  size_t size() const { return Peers.size(); }

private:
  struct Peer {
    int32_t Pid = 0;
    int PidFd = -1;
    /// The process's start time (/proc/PID/stat field 22), where no pidfd.
    std::optional<uint64_t> Started;
    /// Since when it is seen stopped, if it is.
    std::optional<std::chrono::steady_clock::time_point> StoppedSince;
    bool Self = false;
  };
  std::vector<Peer> Peers;
};

/// The state letter and start time of process \p Pid from /proc/PID/stat,
/// or nothing when it cannot be read.
struct ProcessStat {
  char State = '?';
  uint64_t StartTime = 0;
};
std::optional<ProcessStat> readProcessStat(int32_t Pid);

} // namespace collc::rt::shm

#endif
