//===- runtime/diagnose/Diagnosis.h - The root cause of a hang or a death -*- C++ -*-===//
//
// `collc diagnose` reasons over the records of a run
// (RecordSet.h) by one set of rules, for collc's dumps and PyTorch's alike,
// in this order; the first that finds a cause gives it:
//
//  1. different plans: ranks whose plan digest differs from the plan given
//     (without one, a set of dumps with two digests names both sides and
//     no culprit: which plan was meant is not in the records);
//  2. a skipped op: a rank that issued later ops of a channel but not the
//     one the others wait at (its record reaching back past it), or, given
//     the plan, a rank whose events leave out a launch the plan gives it;
//  3. split sizes: an all_to_all_v refused for a rank's split sizes (the
//     rank that sent them is named by every member, or refused alone);
//  4. disagreeing ops (torch): members of one process group whose op at one
//     sequence number differs, one of them against all the others;
//  5. a rank's own failure (an error that blames no peer);
//  6. the wait: each rank that waits (its earliest op not completed) waits
//     for the members of that op that have not issued it. Following those
//     waits leads to the rank everyone ends up waiting for: one outside any
//     op (behind: in compute, or finished), or one whose dump is missing
//     and that the waits single out, every other member being known to
//     have arrived (dead when a survivor lost its connection to it,
//     stalled otherwise). Ranks that wait only in
//     one group while ranks outside it went on make it a timeout confined
//     to that group.
//
// A culprit is named only from evidence; where it is not enough (two
// candidates whose dumps are missing and whom no survivor told apart, ranks
// that wait for each other) the diagnosis says it cannot decide, and why,
// and lists the candidates: it never guesses. fr_trace, PyTorch's analyzer,
// blames the ranks missing from the first collective that not every member
// joined, which names a rank that only waited for another group's
// collective; following the waits names the rank they end at.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_DIAGNOSIS_H
#define COLLC_RUNTIME_DIAGNOSE_DIAGNOSIS_H

#include "plan/Plan.h"
#include "runtime/diagnose/RecordSet.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::diag {

enum class Cause {
  DeadRank,       ///< gone: no dump, and a survivor lost its connection
  StalledRank,    ///< stopped answering: no dump, its peers timed out
  RankBehind,     ///< outside any op while others wait for it
  RankAhead,      ///< skipped an op the others wait at
  DifferentPlans, ///< ranks run different plans
  SplitSizes,     ///< all_to_all_v split sizes refused at run time
  GroupTimeout,   ///< waits confined to one group while the others went on
  OwnFailure,     ///< an error of the rank's own (no peer to blame)
  OpMismatch,     ///< members issued different ops at one place
  NoFault,        ///< nothing waits, nothing failed
  Undecided,      ///< the records do not single out a culprit
};
llvm::StringRef causeName(Cause C);

/// What one rank was doing when it dumped, or that it left no dump.
struct RankView {
  int64_t Rank = 0;
  bool Dumped = false;
  std::string File;
  /// "waits at comm #0 all_reduce in @dp/0, step 81 of replay 4 for rank 2".
  std::string State;
  std::vector<int64_t> WaitsFor, MaybeWaitsFor;
  std::string Error;
};

struct Diagnosis {
  Cause Class = Cause::Undecided;
  std::vector<int64_t> Culprits;
  /// Undecided: the ranks it could be.
  std::vector<int64_t> Candidates;
  /// Where it shows: the culprit's failed or skipped op, or the op the
  /// others wait at for it.
  std::string Label, Op, Group, Loc;
  int64_t Replay = -1, Step = -1, Comm = -1;
  /// The root cause first, in one paragraph.
  std::string RootCause;
  /// What the conclusion rests on.
  std::vector<std::string> Evidence;
  std::vector<RankView> Ranks;
  /// Missing and unreadable dumps, records that lost events.
  std::vector<std::string> Findings;
};

struct DiagnoseOptions {
  /// The plan the run meant to run (collc dumps only), or null.
  const plan::Plan *Plan = nullptr;
};

Diagnosis diagnose(const RecordSet &S, const DiagnoseOptions &O = {});

} // namespace collc::diag

#endif
