//===- ir/OpKind.h - The kinds of IR op --------------------------*- C++ -*-===//
//
// What an op does, and what that implies for its syntax and its meaning
// across ranks. Everything here is generated from ir/Collectives.def, the
// one table of the vocabulary; add a kind there, not here.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_OPKIND_H
#define COLLC_IR_OPKIND_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace collc {

enum class OpKind : uint8_t {
#define COLLC_OP(Enum, ...) Enum,
#include "ir/Collectives.def"
};
constexpr unsigned NumOpKinds = 0
#define COLLC_OP(...) +1
#include "ir/Collectives.def"
    ;

/// The IR keyword: "all_reduce", "compute", ...
llvm::StringRef opKindName(OpKind K);
/// The kind whose keyword is \p Name, if any.
llvm::Optional<OpKind> parseOpKind(llvm::StringRef Name);
/// Every keyword, for "expected one of" messages: "compute, ..., barrier or wait".
llvm::StringRef allOpKindNames();

/// Moves data between ranks (everything but compute and wait).
bool isCommunication(OpKind K);
/// A collective over a group that every member issues (not send/recv).
bool isCollective(OpKind K);
/// Takes a reduce op (all_reduce, reduce_scatter).
bool hasReduceOp(OpKind K);
/// Takes a root rank (broadcast).
bool hasRoot(OpKind K);
/// Takes split sizes (all_to_all_v).
bool takesSplits(OpKind K);
/// Defines values (all but send, barrier and wait).
bool hasResults(OpKind K);

} // namespace collc

#endif // COLLC_IR_OPKIND_H
