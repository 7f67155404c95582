//===- runtime/shm/SegmentHandout.h - Passing a segment to the host's peers -*- C++ -*-===//
//
// The creator of a segment listens on an abstract Unix socket whose name
// holds this user's id and a random nonce, which it hands to its peers
// through the engine's rendezvous (the MPI communicator, the Gloo store):
// the name exists nowhere in the file system and goes with the socket.
// Each peer connects and receives the segment's descriptor (SCM_RIGHTS).
// Both sides check the other with SO_PEERCRED: the creator serves only
// this user's processes among the pids it expects, once each; a peer
// takes a descriptor only from the creator's pid, of this user. A process
// of another run or another user does not know the nonce, and cannot pass
// the credential checks if it guesses it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_SEGMENTHANDOUT_H
#define COLLC_RUNTIME_SHM_SEGMENTHANDOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace collc::rt::shm {

/// A random 128-bit value naming one handout.
using Nonce = std::array<uint64_t, 2>;
/// From the kernel's random source; an error when it has none to give.
llvm::Expected<Nonce> randomNonce();

using Deadline = std::chrono::steady_clock::time_point;

class SegmentServer {
public:
  /// Listens on the abstract address of \p N for this user.
  static llvm::Expected<SegmentServer> listen(const Nonce &N, llvm::StringRef Purpose);
  SegmentServer(SegmentServer &&O) noexcept : Fd(O.Fd), Purpose(std::move(O.Purpose)) {
    O.Fd = -1;
  }
  SegmentServer(const SegmentServer &) = delete;
  ~SegmentServer();

  /// Gives \p SegmentFd to every process in \p Pids, once each, until all
  /// have it or \p By passes: then a Timeout naming the ranks (\p RankOf
  /// a pid) still missing, blaming the first. Connections from anyone else
  /// are closed unserved.
  llvm::Error handOut(int SegmentFd, llvm::ArrayRef<int32_t> Pids, Deadline By,
                      llvm::function_ref<int64_t(int32_t Pid)> RankOf);

private:
  SegmentServer(int Fd, std::string Purpose) : Fd(Fd), Purpose(std::move(Purpose)) {}
  int Fd = -1;
  std::string Purpose;
};

/// Connects to the server of \p N, run by process \p ServerPid of this
/// user (rank \p ServerRank, which errors blame), and receives its
/// descriptor (close-on-exec) before \p By; fails at once when that
/// process has ended.
llvm::Expected<int> receiveSegment(const Nonce &N, int32_t ServerPid, int64_t ServerRank,
                                   Deadline By, llvm::StringRef Purpose);

} // namespace collc::rt::shm

#endif
