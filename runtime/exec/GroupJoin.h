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

/// A driver that can join a group watching its members' processes, known
/// from a parent group's join (joinGroupOf).
template <class D>
concept WatchedJoinDriver = requires(const typename D::Communicator &Parent,
                                     llvm::ArrayRef<int32_t> ParentRanks, typename D::UniqueId Id,
                                     size_t Rank) {
  D::joinWatched(Parent, ParentRanks, Id, Rank);
};

namespace detail {
/// Joins group \p Name on driver \p D as \p Join does, given the group's
/// id, every wait (the join's included) bounded by \p Timeout.
template <class D, class JoinFn>
llvm::Expected<typename D::Communicator> joinBounded(llvm::StringRef Name,
                                                     std::chrono::milliseconds Timeout,
                                                     JoinFn Join) {
  llvm::Expected<typename D::UniqueId> Id = D::groupId({Name.str()});
  if (!Id)
    return Id.takeError();
  DefaultTimeoutScope Scope(Timeout);
  llvm::Expected<typename D::Communicator> C = Join(*Id);
  if (C)
    D::setTimeout(*C, Timeout);
  return C;
}
} // namespace detail

/// Joins group \p Name as rank \p Rank of \p Size on driver \p D, every
/// wait (the join's included) bounded by \p Timeout.
template <class D>
llvm::Expected<typename D::Communicator> joinGroup(llvm::StringRef Name, size_t Size, size_t Rank,
                                                   std::chrono::milliseconds Timeout) {
  return detail::joinBounded<D>(Name, Timeout, [&](const typename D::UniqueId &Id) {
    return D::join(Id, Size, Rank);
  });
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
  if constexpr (WatchedJoinDriver<D>)
    return detail::joinBounded<D>(Name, Timeout, [&](const typename D::UniqueId &Id) {
      return D::joinWatched(Parent, ParentRanks, Id, Rank);
    });
  else
    return joinGroup<D>(Name, ParentRanks.size(), Rank, Timeout);
}

} // namespace collc::rt

#endif
