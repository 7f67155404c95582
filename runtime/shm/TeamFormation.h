//===- runtime/shm/TeamFormation.h - A team, and an arena, from a group -*- C++ -*-===//
//
// What a group's members do together, through the bootstrap of
// HostMeeting.h, once they know where each is: form their host's team
// (its segment, its header checked by every member), or share an arena
// for the executor's buffers (each member's region, the whole mapped by
// all). Every member of the group calls these at the same point, alone on
// its host or not; a member alone on its host gets nothing.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_SHM_TEAMFORMATION_H
#define COLLC_RUNTIME_SHM_TEAMFORMATION_H

#include "runtime/shm/HostMeeting.h"
#include "runtime/shm/SharedArena.h"
#include "runtime/shm/ShmTeam.h"

#include <memory>

namespace collc::rt::shm {

/// This host's team of group \p Group (null when this member is alone).
llvm::Expected<std::shared_ptr<ShmTeam>> formTeam(const GroupHosts &H, llvm::StringRef Group,
                                                  GatherWords Gather, Deadline By);

/// An arena on each host in which this member may take \p Bytes (null
/// when it is alone on its host).
llvm::Expected<std::shared_ptr<SharedArena>> shareArena(const GroupHosts &H, uint64_t Bytes,
                                                        llvm::StringRef Group, GatherWords Gather,
                                                        Deadline By);

} // namespace collc::rt::shm

#endif
