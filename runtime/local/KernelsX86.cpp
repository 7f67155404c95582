//===- runtime/local/KernelsX86.cpp - Vector reductions for f32 and f64 ----===//
//
// One pass over the sources per vector: load from each source in rank order,
// combine, store to every destination (non-temporal when the result is
// large). This moves exactly the bytes a copy would, which the portable
// block loop in Kernels.cpp does not quite. Used when the CPU has AVX2
// (checked at run time); otherwise the portable loop does the work. The
// arithmetic is the reference's, element by element: same order, no FMA,
// IEEE division for avg, and min/max that pick like `v < acc ? v : acc`.
//
//===----------------------------------------------------------------------===//

#include "runtime/local/Kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace collc::rt::local {

namespace {

struct F32x8 {
  using T = float;
  using V = __m256;
  static constexpr unsigned Lanes = 8;
  __attribute__((target("avx2"))) static V load(const T *P) { return _mm256_loadu_ps(P); }
  __attribute__((target("avx2"))) static void store(T *P, V X, bool NT) {
    if (NT)
      _mm256_stream_ps(P, X);
    else
      _mm256_storeu_ps(P, X);
  }
  __attribute__((target("avx2"))) static V set1(T X) { return _mm256_set1_ps(X); }
  __attribute__((target("avx2"))) static V add(V A, V B) { return _mm256_add_ps(A, B); }
  __attribute__((target("avx2"))) static V mul(V A, V B) { return _mm256_mul_ps(A, B); }
  __attribute__((target("avx2"))) static V div(V A, V B) { return _mm256_div_ps(A, B); }
  __attribute__((target("avx2"))) static V min(V New, V Acc) { return _mm256_min_ps(New, Acc); }
  __attribute__((target("avx2"))) static V max(V New, V Acc) { return _mm256_max_ps(New, Acc); }
};
struct F64x4 {
  using T = double;
  using V = __m256d;
  static constexpr unsigned Lanes = 4;
  __attribute__((target("avx2"))) static V load(const T *P) { return _mm256_loadu_pd(P); }
  __attribute__((target("avx2"))) static void store(T *P, V X, bool NT) {
    if (NT)
      _mm256_stream_pd(P, X);
    else
      _mm256_storeu_pd(P, X);
  }
  __attribute__((target("avx2"))) static V set1(T X) { return _mm256_set1_pd(X); }
  __attribute__((target("avx2"))) static V add(V A, V B) { return _mm256_add_pd(A, B); }
  __attribute__((target("avx2"))) static V mul(V A, V B) { return _mm256_mul_pd(A, B); }
  __attribute__((target("avx2"))) static V div(V A, V B) { return _mm256_div_pd(A, B); }
  __attribute__((target("avx2"))) static V min(V New, V Acc) { return _mm256_min_pd(New, Acc); }
  __attribute__((target("avx2"))) static V max(V New, V Acc) { return _mm256_max_pd(New, Acc); }
};
/// Reduces all \p Count elements: four vectors per step, then the tail one
/// element at a time with the same arithmetic (a tiny message is all tail,
/// and must not pay for the portable path's block setup).
template <typename X>
__attribute__((target("avx2"))) uint64_t
reduceAvx2(ReduceOp Op, double Scale, const char *const *Srcs, unsigned N, uint64_t SrcOffset,
           char *const *Dsts, unsigned ND, uint64_t DstOffset, uint64_t Count, bool Streaming) {
  using T = typename X::T;
  using V = typename X::V;
  constexpr unsigned L = X::Lanes, U = 4; // four vectors per step hide latency
  // Streaming stores need aligned destinations.
  bool NT = Streaming;
  for (unsigned D = 0; D != ND; ++D)
    NT &= (reinterpret_cast<uintptr_t>(Dsts[D] + DstOffset * sizeof(T)) % (L * sizeof(T))) == 0;
  V ScaleV = X::set1(T(Scale)), NV = X::set1(T(N));
  uint64_t I = 0;
  for (; I + L * U <= Count; I += L * U) {
    V Acc[U];
    const T *S0 = reinterpret_cast<const T *>(Srcs[0]) + SrcOffset + I;
    for (unsigned K = 0; K != U; ++K)
      Acc[K] = X::load(S0 + K * L);
    if (Op == ReduceOp::PremulSum)
      for (unsigned K = 0; K != U; ++K)
        Acc[K] = X::mul(Acc[K], ScaleV);
    for (unsigned R = 1; R < N; ++R) {
      const T *S = reinterpret_cast<const T *>(Srcs[R]) + SrcOffset + I;
      for (unsigned K = 0; K != U; ++K) {
        V In = X::load(S + K * L);
        switch (Op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg:
          Acc[K] = X::add(Acc[K], In);
          break;
        case ReduceOp::PremulSum:
          Acc[K] = X::add(Acc[K], X::mul(In, ScaleV));
          break;
        case ReduceOp::Prod:
          Acc[K] = X::mul(Acc[K], In);
          break;
        case ReduceOp::Min:
          Acc[K] = X::min(In, Acc[K]);
          break;
        case ReduceOp::Max:
          Acc[K] = X::max(In, Acc[K]);
          break;
        }
      }
    }
    if (Op == ReduceOp::Avg)
      for (unsigned K = 0; K != U; ++K)
        Acc[K] = X::div(Acc[K], NV);
    for (unsigned D = 0; D != ND; ++D) {
      T *Out = reinterpret_cast<T *>(Dsts[D]) + DstOffset + I;
      for (unsigned K = 0; K != U; ++K)
        X::store(Out + K * L, Acc[K], NT);
    }
  }
  for (; I != Count; ++I) {
    T Acc = reinterpret_cast<const T *>(Srcs[0])[SrcOffset + I];
    if (Op == ReduceOp::PremulSum)
      Acc = Acc * T(Scale);
    for (unsigned R = 1; R < N; ++R) {
      T In = reinterpret_cast<const T *>(Srcs[R])[SrcOffset + I];
      switch (Op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg:
        Acc = Acc + In;
        break;
      case ReduceOp::PremulSum:
        Acc = Acc + In * T(Scale);
        break;
      case ReduceOp::Prod:
        Acc = Acc * In;
        break;
      case ReduceOp::Min:
        Acc = In < Acc ? In : Acc;
        break;
      case ReduceOp::Max:
        Acc = In > Acc ? In : Acc;
        break;
      }
    }
    if (Op == ReduceOp::Avg)
      Acc = Acc / T(N);
    for (unsigned D = 0; D != ND; ++D)
      reinterpret_cast<T *>(Dsts[D])[DstOffset + I] = Acc;
  }
  return Count;
}

bool haveAvx2() {
  static const bool Have = __builtin_cpu_supports("avx2");
  return Have;
}

} // namespace

uint64_t reduceFast(ElemType T, ReduceOp Op, double Scale, const char *const *Srcs, unsigned N,
                    uint64_t SrcOffset, char *const *Dsts, unsigned ND, uint64_t DstOffset,
                    uint64_t Count, bool Streaming) {
  // Without AVX2 the portable loop in Kernels.cpp (which the compiler
  // vectorizes for SSE2) does the work.
  if (!haveAvx2())
    return 0;
  if (T == ElemType::F32)
    return reduceAvx2<F32x8>(Op, Scale, Srcs, N, SrcOffset, Dsts, ND, DstOffset, Count, Streaming);
  if (T == ElemType::F64)
    return reduceAvx2<F64x4>(Op, Scale, Srcs, N, SrcOffset, Dsts, ND, DstOffset, Count, Streaming);
  return 0;
}

} // namespace collc::rt::local

#else

namespace collc::rt::local {
uint64_t reduceFast(ElemType, ReduceOp, double, const char *const *, unsigned, uint64_t,
                    char *const *, unsigned, uint64_t, uint64_t, bool) {
  return 0;
}
} // namespace collc::rt::local

#endif
