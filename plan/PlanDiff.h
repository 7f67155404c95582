//===- plan/PlanDiff.h - What differs between two plans ----*- C++ -*-===//
#ifndef COLLC_PLAN_PLANDIFF_H
#define COLLC_PLAN_PLANDIFF_H

#include "plan/Plan.h"

#include <string>
#include <vector>

namespace collc {

/// Differences in words, most important first: digest, world and groups,
/// comms added or removed, tensors that moved between buckets, launch order,
/// buffer sizes. Empty when the plans agree on everything ranks must agree on.
std::vector<std::string> diffPlans(const plan::Plan &A, const plan::Plan &B);

} // namespace collc

#endif
