//===- runtime/exec/HostDriverChecks.h - Arguments of a host collective -*- C++ -*-===//
//
// The one place where the host drivers (local, mpi, gloo) validate the
// arguments of a collective before they enqueue it: communicator present,
// root and peer in range, source and destination large enough, the element
// type named twice alike, all_to_all_v's counts. A backend adds only what is
// its own (MPI's int counts, a broken group) after these. Each check names
// the operation, the value and what was expected; sizes are computed with
// checked arithmetic, since counts come from the caller.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_HOSTDRIVERCHECKS_H
#define COLLC_RUNTIME_EXEC_HOSTDRIVERCHECKS_H

#include "runtime/exec/CollectiveDriver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace collc::rt {

/// Host memory a host driver reads or writes.
struct HostResource {
  char *Data = nullptr;
  uint64_t Bytes = 0;
};

/// What the checks need of this rank's group.
struct HostGroupView {
  int Size = 0;
  int Rank = 0;
};

using HostElements = Elements<ElemType>;

/// An InvalidArgument error with \p Msg.
llvm::Error invalidArgument(const llvm::Twine &Msg);

/// A collective on a rank that is not in the group (no communicator).
llvm::Error noCommunicatorError();
template <typename CommPtr> llvm::Error checkCommunicator(const CommPtr &C) {
  return C ? llvm::Error::success() : noCommunicatorError();
}
/// Work enqueued without a comm stream.
llvm::Error noStreamError();
/// all_gather_words runs on the caller's thread: nothing may be pending.
llvm::Error checkNothingPending(uint64_t Pending);
/// A group id needs a name.
llvm::Error checkGroupName(const CommunicationId &Id);
/// \p Ranks in 1..\p MaxRanks and \p Rank among them (\p Backend names the
/// group in the message: "a local group").
llvm::Error checkJoin(llvm::StringRef Backend, size_t MaxRanks, size_t Ranks, size_t Rank);

/// The elements \p Bytes hold: an unknown type is Unsupported, a partial
/// element InvalidArgument.
llvm::Expected<HostElements> hostElements(ElemType T, uint64_t Bytes);

/// \p What must point at \p Need bytes or more. \p What is rendered only
/// for an error: this runs on every collective's issue.
llvm::Error checkSpan(const llvm::Twine &What, const HostResource &R, uint64_t Need);

/// all_reduce (\p Scatter false) or reduce_scatter (true) with \p Op: \p T
/// must be E.Type; the source holds one chunk (reduce_scatter: one per
/// rank), the destination one chunk; premul_sum's \p Scale is a value of
/// \p T (ir/PremulFactor.h).
llvm::Error checkReduction(HostGroupView G, bool Scatter, const HostResource &Src,
                           const HostResource &Dst, HostElements E, ElemType T, ReduceOp Op,
                           double Scale);
llvm::Error checkAllGather(HostGroupView G, const HostResource &Src, const HostResource &Dst,
                           HostElements E);
/// Only the root has a source; the root must be in the group.
llvm::Error checkBroadcast(HostGroupView G, const HostResource *Src, const HostResource &Dst,
                           HostElements E, size_t Root);
llvm::Error checkAllToAll(HostGroupView G, const HostResource &Src, const HostResource &Dst,
                          HostElements E, size_t Ranks);
/// One count per rank each way; the totals, in elements, if the spans hold
/// them.
struct AllToAllVTotals {
  uint64_t Sent = 0;
  uint64_t Received = 0;
};
llvm::Expected<AllToAllVTotals> checkAllToAllV(HostGroupView G, const HostResource &Src,
                                               const HostResource &Dst, ElemType T,
                                               llvm::ArrayRef<uint64_t> SendCounts,
                                               llvm::ArrayRef<uint64_t> RecvCounts);
/// send (\p Send true, \p R the source) or recv (\p R the destination):
/// the peer is another rank of the group.
llvm::Error checkPointToPoint(HostGroupView G, bool Send, const HostResource &R, HostElements E,
                              size_t Peer);

} // namespace collc::rt

#endif
