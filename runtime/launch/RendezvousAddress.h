//===- runtime/launch/RendezvousAddress.h - Where the processes of a run meet -*- C++ -*-===//
//
// The processes of one run find each other through a rendezvous: a shared
// directory (file:DIR), a Redis server (redis://HOST:PORT, for many hosts),
// a store the program brought and registered (store:NAME, ExternalStore.h:
// torch's TCPStore), or MPI itself (mpi: under mpirun, where
// MPI_COMM_WORLD already joins them). The gloo backend builds its store from it, and the nccl
// backend exchanges its unique ids through it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LAUNCH_RENDEZVOUSADDRESS_H
#define COLLC_RUNTIME_LAUNCH_RENDEZVOUSADDRESS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace collc::rt {

struct RendezvousAddress {
  enum class Kind { File, Redis, Store, Mpi };
  Kind How = Kind::File;
  std::string Directory; ///< File
  std::string Host;      ///< Redis
  uint16_t Port = 0;     ///< Redis
  std::string StoreName; ///< Store
  /// Where it was given, for errors: "--rendezvous", "COLLC_RENDEZVOUS",
  /// "options->rendezvous".
  std::string Source = "--rendezvous";
  /// As parsed: file:DIR, redis://HOST:PORT, store:NAME or mpi.
  std::string text() const;
};

/// Parses \p Text, given by \p Source; an error names both and the three
/// accepted forms.
llvm::Expected<RendezvousAddress> parseRendezvous(llvm::StringRef Text,
                                                  llvm::StringRef Source = "--rendezvous");

/// What backend \p Backend meets through when no rendezvous is given: "mpi"
/// for mpi (MPI_COMM_WORLD) and nccl (its unique ids broadcast with MPI, as
/// nccl-tests do); "" for any other, which must be told a store.
llvm::StringRef defaultRendezvous(llvm::StringRef Backend);

/// Why backend \p Backend cannot meet through \p Where, naming where it
/// was given; none when it can. The one rule for the CLI (before anything
/// meets) and the executors: mpi meets through MPI_COMM_WORLD only, gloo
/// through a store only (file or redis), nccl exchanges its ids through
/// any.
std::optional<std::string> rendezvousMismatch(llvm::StringRef Backend,
                                              const RendezvousAddress &Where);

} // namespace collc::rt

#endif
