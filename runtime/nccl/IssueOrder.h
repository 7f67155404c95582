//===- runtime/nccl/IssueOrder.h - One rank's plan as its comm stream issues it -*- C++ -*-===//
//
// On NCCL all of a rank's communication runs in order on its one comm
// stream: an NCCL group (ncclGroupStart ... ncclGroupEnd) starts when
// everything issued before it has completed, and ends when all of its
// calls have. A send or recv that the program leaves posted while the rank
// computes (`send async`/`recv async` ... `wait`) therefore cannot stay
// posted on its own: issued alone, it would hold the stream until its
// partner arrives, and the rank would issue nothing else meanwhile. So the
// lowering groups launches by this rule (the issue order):
//
//  - A send or recv (blocking, async or of a `p2p { }` batch) opens an NCCL
//    group, or joins the one open. The group stays open across computes and
//    across waits for other comms, and takes every send and recv launched
//    until it is issued: at the first wait for one of its comms, before the
//    next collective launch (a collective never joins it, and it is never
//    deferred past one: the collective would run first on this rank and
//    could wait for a peer that waits for this send or recv), or at the end
//    of the step. Deferring a post past computes is safe: a compute never
//    waits for a comm launched after it.
//  - Consecutive collective launches form one group of their own (NCCL
//    fuses them), issued at the next step that is not a collective launch.
//  - A group never spans two communicators (two plan groups, or a plan
//    group and the world): a launch on another communicator than the open
//    group's issues that group first. NCCL launches a group's communicators
//    one after another on the stream in an order of its own (by
//    communicator hash, random per run), so a group of a recv on one and a
//    send on another would run the recv first in about half of all runs.
//  - An all_to_all_v of split sizes known only at run time is issued
//    eagerly on its own, after the group before it.
//
// Invariants: within a group the calls keep plan launch order, so sends
// and recvs between two ranks are posted, and matched, in the plan's order;
// every comm's wait comes after the group that issues it; every collective
// keeps its place in plan order among the collectives (identical on every
// rank); a group's comms share one communicator. What this order can still
// not run (a send or recv whose partner comes after a collective, after its
// own wait on the peer, or on another communicator after it) is refused
// before anything runs, by StreamOrderCheck.h, which simulates exactly this
// order.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_ISSUEORDER_H
#define COLLC_RUNTIME_NCCL_ISSUEORDER_H

#include "plan/Plan.h"

#include <cstdint>
#include <vector>

namespace collc::rt::nccl {

/// One entry of a rank's issue order.
struct Issue {
  enum Kind : uint8_t {
    Compute, ///< the model's compute (Index): it records ready[Index]
    Launch,  ///< Comms, issued together: one NCCL group when more than one
    Eager,   ///< a runtime all_to_all_v (Index), issued on its own, eagerly
    Wait,    ///< the wait step of comm Index
  };
  Kind K = Compute;
  uint32_t Index = 0;
  /// Launch: the comms in plan launch order; all sends and recvs, or all
  /// collectives.
  std::vector<uint32_t> Comms;
  /// Launch: per comm of Comms, how many entries of this issue order come
  /// before its launch step. A held comm is launched before the entries
  /// between its launch and its group: a fenced one waits for the computes
  /// among the first LaunchedAfter entries only.
  std::vector<size_t> LaunchedAfter;
  /// Launch: the steps the group was held open across (computes, and waits
  /// for other comms), after its first launch; 0 when issued where launched.
  uint32_t HeldAcross = 0;
  /// Launch: the first compute it was held across (a note for the listing).
  int64_t FirstHeldCompute = -1;
  /// Launch: what issued it (a note for the listing): the wait step for
  /// one of its comms, the launch of a collective or of a comm on another
  /// communicator (Until: that comm), or the end of the step. A group held
  /// open says why it ended; any group says when a communicator change ended
  /// it.
  enum Cause : uint8_t { AtLaunch, AtWait, BeforeCollective, AtCommChange, AtEnd };
  Cause IssuedBy = AtLaunch;
  uint32_t Until = 0;
};

/// The plan's steps of rank \p Rank (0 <= Rank < P.World) in the order its
/// comm stream issues them.
std::vector<Issue> issueOrder(const plan::Plan &P, int64_t Rank);

} // namespace collc::rt::nccl

#endif
