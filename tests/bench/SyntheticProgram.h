//===- tests/bench/SyntheticProgram.h - Large generated programs -*- C++ -*-===//
//
// Programs of any size for benchmarks and scaling tests: a data-parallel
// backward pass (a compute producing each gradient, an all_reduce of it),
// with a tensor-parallel group and a pipeline send/recv every few layers
// so the rank-dependent paths of the verifier are exercised too.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_BENCH_SYNTHETICPROGRAM_H
#define COLLC_TESTS_BENCH_SYNTHETICPROGRAM_H

#include <cstdint>
#include <string>

namespace collc::bench {

/// About \p NumOps ops over \p World ranks (World must be even).
std::string syntheticProgramText(int64_t NumOps, int64_t World);

} // namespace collc::bench

#endif
