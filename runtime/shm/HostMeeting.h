//===- runtime/shm/HostMeeting.h - Where a group's processes are -*- C++ -*-===//
//
// How a group's processes learn which of them share a host, and share a
// segment there, through the bootstrap they already have: an all-gather of
// words over the group (the engine's: the MPI communicator, the Gloo
// store's connected context). Every step is a gather that every member of
// the group takes part in, alone on its host or not, so they all go
// through the same steps in the same order:
//  1. meetHosts: each member's host (HostIdentity.h), pid, CPUs and chosen
//     transport, and a random tag by which it finds its own place.
//  2. shareHostSegment: on each host the first member creates the segment
//     and listens for its peers (SegmentHandout.h); it gathers the nonce of
//     the handout (the others gather zeros); each peer receives the
//     segment from its host's first member and checks it; a last gather
//     says whether every member of the group holds its host's segment, so
//     they all go on, or all give up, together.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_HOSTMEETING_H
#define COLLC_RUNTIME_SHM_HOSTMEETING_H

#include "runtime/shm/SegmentHandout.h"
#include "runtime/shm/SharedSegment.h"
#include "runtime/shm/Transport.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace collc::rt::shm {

/// An all-gather of words over the group: every member passes as many,
/// and gets every member's in group rank order.
using GatherWords =
    llvm::function_ref<llvm::Expected<std::vector<uint32_t>>(llvm::ArrayRef<uint32_t>)>;

/// Where a group's processes are, as they told each other.
struct GroupHosts {
  int Rank = 0, Size = 0;      ///< this process in the group
  std::vector<int32_t> Pids;   ///< per group rank
  std::vector<uint32_t> HostOf; ///< per group rank: hosts numbered by their first rank
  uint32_t Hosts = 0;
  std::vector<int32_t> Local;  ///< the group ranks on this host, ascending
  uint32_t LocalIndex = 0;     ///< this process among them
  /// This host's members of the group outnumber the CPUs they may run on.
  bool Oversubscribed = false;
  std::string HostName;        ///< this host's, for messages
  Transport Mode = Transport::Auto; ///< the same on every member
  /// The members every host holds, if all hold as many; else 0.
  uint32_t membersPerHost() const;
};

/// Step 1 (one gather). \p Group names the group in errors.
llvm::Expected<GroupHosts> meetHosts(llvm::StringRef Group, GatherWords Gather);

/// Step 2 (two gathers): this member's mapping of its host's segment of
/// \p Bytes (nothing when it is alone on its host), and the handout's
/// nonce. \p Init writes a new segment's header (on the creator), \p Check
/// checks it (on the others), before the last gather.
struct HostSegment {
  std::optional<SharedSegment> Seg;
  Nonce N{};
};
llvm::Expected<HostSegment>
shareHostSegment(const GroupHosts &H, uint64_t Bytes, llvm::StringRef Purpose, GatherWords Gather,
                 Deadline By, llvm::function_ref<void(char *Base, const Nonce &N)> Init,
                 llvm::function_ref<llvm::Error(const char *Base, const Nonce &N)> Check);

} // namespace collc::rt::shm

#endif
