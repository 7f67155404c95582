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

/// Shapes that stress one dimension of the compiler each, for the scaling
/// bench (time at 1M ops over time at 100k must stay near 10):
///  - one-tensor: every collective reads the same tensor;
///  - distinct:   every collective has its own producer and tensor;
///  - groups:     collectives spread over a thousand groups;
///  - rank-dependent: pipeline send/recv pairs under `when` predicates and
///                rank-expression peers, world 16 (the plan states a peer per
///                rank: at world 64 a 1M-op plan is 290 MB);
///  - auto:       a backward chain, each compute making one gradient from the
///                last, each gradient all-reduced, compiled with
///                bucket{policy=auto} (its per-boundary choice and the
///                simulations that check it against DDP's default).
enum class Shape { OneTensor, Distinct, Groups, RankDependent, Auto };
inline constexpr Shape AllShapes[] = {Shape::OneTensor, Shape::Distinct, Shape::Groups,
                                      Shape::RankDependent, Shape::Auto};
const char *shapeName(Shape S);
/// The `--bucket` policy the shape is compiled with (ddp, the default, or auto).
const char *shapeBucketPolicy(Shape S);
/// About \p NumOps ops of shape \p S.
std::string shapeProgramText(Shape S, int64_t NumOps);

} // namespace collc::bench

#endif
