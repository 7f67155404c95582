//===- tools/collc/ProcessLaunchFlags.h - Where a process rank stands -*- C++ -*-===//
//
// The flags of every subcommand that runs as one rank of a process backend
// under a launcher (`collc run`, `collc bench`): --rendezvous, --rank,
// --world, --local-rank, --local-world, --transport, and how they resolve,
// with the launcher's environment, COLLC_RENDEZVOUS and COLLC_TRANSPORT,
// into this process's place, the address its peers meet at and what
// carries their bytes. One resolution, so the commands cannot drift.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_PROCESSLAUNCHFLAGS_H
#define COLLC_TOOLS_COLLC_PROCESSLAUNCHFLAGS_H

#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace collc::tool {

struct ProcessLaunch {
  rt::ProcessPlace Place;
  rt::RendezvousAddress Where;
};

struct ProcessLaunchFlags {
  llvm::cl::opt<std::string> Rendezvous;
  /// auto, shm or engine (runtime/shm/Transport.h); mpi and gloo only.
  llvm::cl::opt<std::string> Transport;
  llvm::cl::opt<int64_t> Rank, World, LocalRank;
  /// Only where the processes' memory matters (collc run's budget).
  std::optional<llvm::cl::opt<int64_t>> LocalWorld;
  ProcessLaunchFlags(llvm::cl::SubCommand &Sub, bool WithLocalWorld = false);

  /// This process's place (flags over the launcher's environment) and the
  /// rendezvous (--rendezvous, else COLLC_RENDEZVOUS, else `mpi` for the mpi
  /// backend); --transport, where given, becomes this process's transport
  /// (runtime/shm/Transport.h's setTransport), and a malformed
  /// COLLC_TRANSPORT is refused here. An error, prefixed with --backend
  /// \p Backend, says what is missing or malformed (a usage error).
  llvm::Expected<ProcessLaunch> resolve(llvm::StringRef Backend) const;
  /// For --backend local, whose ranks are threads: an error naming the first
  /// of these flags given (they would be ignored), else success.
  llvm::Error refuseOnLocal() const;

private:
  /// --rank, --world, --local-rank and (where registered) --local-world.
  std::vector<const llvm::cl::opt<int64_t> *> placeFlags() const;
};

} // namespace collc::tool

#endif
