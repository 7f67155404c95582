//===- compiler/Shrink.h - Smaller tensors, same communication ---*- C++ -*-===//
//
// `collc run` executes a program for real on one machine; Llama-2-7B's
// gathered weights do not fit in one host's memory eight times over. Shrink
// divides every tensor dimension by a factor while keeping what the
// collectives need (reduce_scatter and all_to_all inputs stay divisible by
// their group size, send and recv agree, results follow their operands), so
// the same ops, buckets and order run with smaller buffers.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_SHRINK_H
#define COLLC_COMPILER_SHRINK_H

#include "ir/Program.h"

#include "llvm/Support/Error.h"

namespace collc {

/// Divides the dimensions of \p P's tensors by \p Factor (>= 1). Fails on
/// programs it cannot shrink consistently (static all_to_all_v splits).
llvm::Error shrinkProgram(Program &P, int64_t Factor);

/// Bytes the communicated tensors of \p P take on one rank, if every dim
/// were divided by \p Factor.
uint64_t communicatedBytesPerRank(const Program &P, int64_t Factor = 1);

} // namespace collc

#endif
