//===- runtime/exec/GroupJoin.h - Joining a group, bounded by a timeout -*- C++ -*-===//
//
// A driver's join takes no timeout: it waits for the other members with the
// default (defaultTimeout()). Everything that joins a group on behalf of an
// object with a timeout of its own (an executor, a interface adapter, a run's CPU
// world) joins through joinGroup, so the join itself waits as long as that
// object's operations will, and the communicator keeps the timeout.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_GROUPJOIN_H
#define COLLC_RUNTIME_EXEC_GROUPJOIN_H

#include "runtime/exec/Timeout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>

namespace collc::rt {

/// Joins group \p Name as rank \p Rank of \p Size on driver \p D, every
/// wait (the join's included) bounded by \p Timeout.
template <class D>
llvm::Expected<typename D::Communicator> joinGroup(llvm::StringRef Name, size_t Size, size_t Rank,
                                                   std::chrono::milliseconds Timeout) {
  llvm::Expected<typename D::UniqueId> Id = D::groupId({Name.str()});
  if (!Id)
    return Id.takeError();
  DefaultTimeoutScope Scope(Timeout);
  llvm::Expected<typename D::Communicator> C = D::join(*Id, Size, Rank);
  if (C)
    D::setTimeout(*C, Timeout);
  return C;
}

/// joinGroup for a group whose members all belong to \p Parent, member i
/// being rank \p ParentRanks[i] of it: a driver that can (joinWatched)
/// watches the members' processes, known from the parent's join, from the
/// start, so a member that ended since is named at once, not at the
/// join's deadline; on another driver, joinGroup.
template <class D>
llvm::Expected<typename D::Communicator>
joinGroupOf(const typename D::Communicator &Parent, llvm::ArrayRef<int32_t> ParentRanks,
            llvm::StringRef Name, size_t Rank, std::chrono::milliseconds Timeout) {
  if constexpr (requires { D::joinWatched(Parent, ParentRanks, typename D::UniqueId(), Rank); }) {
    llvm::Expected<typename D::UniqueId> Id = D::groupId({Name.str()});
    if (!Id)
      return Id.takeError();
    DefaultTimeoutScope Scope(Timeout);
    llvm::Expected<typename D::Communicator> C = D::joinWatched(Parent, ParentRanks, *Id, Rank);
    if (C)
      D::setTimeout(*C, Timeout);
    return C;
  } else {
    return joinGroup<D>(Name, ParentRanks.size(), Rank, Timeout);
  }
}

} // namespace collc::rt

#endif
