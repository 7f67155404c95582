//===- ir/TypeInference.h - Result types of collectives ----------*- C++ -*-===//
//
// The one place that knows what a collective produces from what it takes,
// used by the parser (when the text omits result types) and the verifier
// (when it does not). The group's size must be the same on every rank for
// ops whose result shape depends on it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_TYPEINFERENCE_H
#define COLLC_IR_TYPEINFERENCE_H

#include "ir/Program.h"

#include "llvm/ADT/Optional.h"
#include "llvm/Support/Error.h"

namespace collc {

/// Whether the result types of \p K are implied by its operands
/// (false for compute, recv and all_to_all_v, whose types are written).
bool hasInferredResultTypes(OpKind K);

/// The type of result \p Index of \p O, from its operands and group.
/// The error says what is wrong with the operands, without a location.
llvm::Expected<TensorType> inferResultType(const Program &P, const Op &O, unsigned Index);

} // namespace collc

#endif // COLLC_IR_TYPEINFERENCE_H
