//===- plan/PlanValidator.h - A plan is input: check it --*- C++ -*-===//
//
// A plan file is untrusted: its digest catches accidents and ranks that
// disagree, not an edit resealed by hand. validatePlan checks everything
// the lowering, the executors and the dumps assume, once, at the boundary
// (readPlan runs it after parsing; lowerToPlan runs it on what it built), so
// they may then index, divide and size without checking again:
//  - every index in range (tensors, buffers, groups, computes, comms, steps,
//    slots, the counts tensor), every rank set inside the world;
//  - groups: subgroups non-empty, disjoint, inside 0..world-1, and every
//    rank that issues a comm is a member of the comm's group;
//  - per kind: send/recv one tensor; peers (send/recv) and roots
//    (broadcast) in range; sizes of inputs and outputs that agree with the
//    kind and group size; all_to_all_v split lists of group size squared
//    with sums inside the rows, or an integer counts tensor of one entry per
//    rank; the comm's dtype equal to its tensors' element type; a fenced
//    comm, or one in a p2p batch, async;
//  - sizes with checked arithmetic: tensor bytes, slots inside their buffers,
//    buffers consistent with the comm's tensors;
//  - what the runtime copies is the comm's own: every pack slot of its input
//    buffer one of its inputs, every unpack slot of its output buffer one of
//    its outputs (a slot of another tensor, for which the ranks hold no
//    memory, crashed `collc run`); views only in buffers of one segment; no
//    output listed twice;
//  - steps: every compute once, every comm launched once and waited for
//    after its launch (once, or once per `wait` op that names its results);
//    the alignment a power of two.
// Each error names the plan, the entity (`comm 3 (send)`, which is the plan's
// `comm 3` line), the value and what was expected.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PLAN_PLANVALIDATOR_H
#define COLLC_PLAN_PLANVALIDATOR_H

#include "plan/Plan.h"

namespace collc::plan {

llvm::Error validatePlan(const Plan &P, llvm::StringRef Name = "<plan>");

} // namespace collc::plan

#endif
