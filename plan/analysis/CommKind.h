//===- plan/analysis/CommKind.h - IR op kinds to plan comm kinds ------*- C++ -*-===//
//
// The IR's OpKind and the plan's CommKind are both generated from
// ir/Collectives.def with the same enumerator names, so the mapping is
// generated too: a new communication kind maps itself.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PLAN_ANALYSIS_COMMKIND_H
#define COLLC_PLAN_ANALYSIS_COMMKIND_H

#include "plan/Plan.h"
#include "ir/OpKind.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/ErrorHandling.h"

namespace collc {

/// The plan's kind of a communication op; None for compute and wait.
inline llvm::Optional<plan::CommKind> commKindOf(OpKind K) {
  switch (K) {
#define COLLC_LOCAL_OP(Enum, ...)                                                                 \
  case OpKind::Enum:                                                                               \
    return llvm::None;
#define COLLC_COMM(Enum, ...)                                                                     \
  case OpKind::Enum:                                                                               \
    return plan::CommKind::Enum;
#include "ir/Collectives.def"
  }
  llvm_unreachable("bad op kind");
}

inline OpKind opKindOf(plan::CommKind K) {
  switch (K) {
#define COLLC_COMM(Enum, ...)                                                                     \
  case plan::CommKind::Enum:                                                                       \
    return OpKind::Enum;
#include "ir/Collectives.def"
  }
  llvm_unreachable("bad comm kind");
}

} // namespace collc

#endif // COLLC_PLAN_ANALYSIS_COMMKIND_H
