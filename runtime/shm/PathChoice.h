//===- runtime/shm/PathChoice.h - Which path carries a group's bytes -*- C++ -*-===//
//
// Chosen per group, alike on every member (from facts every member
// gathered: GroupHosts), with the reason, which `collc run` and `collc
// bench` print:
//  - shm: every process of the group is on one host;
//  - hierarchical: the group spans hosts that hold equally many of its
//    processes, more than one each: an all_reduce is reduced within each
//    host, all-reduced across hosts by the engine one slice per local
//    process, and gathered within each host (the engine carries 1/L of
//    each process's bytes); the other collectives take the engine;
//  - engine: a group of one, every process on a host of its own, hosts
//    that hold different numbers, or the transport asked is `engine`.
// With `--transport shm` a group that shared memory cannot serve is an
// error naming why; with `auto` it takes the engine and says why.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_PATHCHOICE_H
#define COLLC_RUNTIME_SHM_PATHCHOICE_H

#include "runtime/shm/HostMeeting.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace collc::rt::shm {

enum class DataPath { Engine, Shm, Hierarchical };
llvm::StringRef dataPathName(DataPath P);

struct PathChoice {
  DataPath Path = DataPath::Engine;
  /// Why, in a sentence ("4 processes on host node7 share memory").
  std::string Why;
};

/// The path of a group whose members are \p H, over engine \p Engine.
llvm::Expected<PathChoice> choosePath(const GroupHosts &H, llvm::StringRef Engine);

/// "group 'G' (N processes): PATH: WHY", as the tools print it.
std::string describePath(llvm::StringRef Group, int Size, const PathChoice &C);

} // namespace collc::rt::shm

#endif
