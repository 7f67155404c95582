//===- runtime/diagnose/PlanCheck.h - A collc record against its plan -*- C++ -*-===//
//
// Given the plan a run meant to run, a rank's record says more than it
// does alone. Every launch of a replay issues one event, so two events of
// one rank that follow each other leave out exactly the launches the plan
// puts between them: launches the rank skipped. And the facts of each
// event (its comm at its step, the op, group, dtype and bytes) must be the
// plan's for that rank (runtime/exec/CommFacts.h computes both sides), or
// the rank runs something else.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_PLANCHECK_H
#define COLLC_RUNTIME_DIAGNOSE_PLANCHECK_H

#include "plan/Plan.h"
#include "runtime/diagnose/RankRecord.h"

#include <optional>
#include <string>
#include <vector>

namespace collc::diag {

/// A launch of the plan that a rank's record leaves out.
struct SkippedLaunch {
  int64_t Replay = 0, Step = 0, Comm = 0;
  /// Said as the reader says ops (collcOpLabel).
  std::string Label;
};

/// The launches \p P gives rank \p R.Rank that \p R leaves out between two
/// of its events (nothing before its first event or after its last is
/// known).
std::vector<SkippedLaunch> skippedLaunches(const RankRecord &R, const plan::Plan &P);

/// The first event of \p R that is not what \p P has its rank do at that
/// step, said with both sides; nullopt when every event agrees.
std::optional<std::string> firstDeparture(const RankRecord &R, const plan::Plan &P);

} // namespace collc::diag

#endif
