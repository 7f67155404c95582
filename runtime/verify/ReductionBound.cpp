//===- runtime/verify/ReductionBound.cpp - Reductions in any order ---------===//
//
// The bound. A sum of n terms computed in any order with k roundings of unit
// roundoff u is within gamma_k * sum |x_i| of the exact sum, gamma_k =
// k u / (1 - k u) (Higham, Accuracy and Stability of Numerical Algorithms,
// 2nd ed., section 4.2); a product is within gamma_k of its exact value,
// relatively. Rounding the accumulator to the element type adds u_T * |r|,
// and a result in T's subnormal range is off by at most T's smallest
// subnormal. The reference and the backend are each such a result, so they
// may differ by twice that: the check never fails a correct backend.
//
// k: n - 1 additions (or multiplications), one more for avg's division, two
// more for premul_sum (each term's product, and the scale rounded into the
// accumulator). fp8 accumulates in f32, so the one rounding of the result to
// 3 or 2 mantissa bits dominates; fp8 saturates, so it never overflows.
//
//===----------------------------------------------------------------------===//

#include "runtime/verify/ReductionBound.h"

#include "runtime/exec/ElementTraits.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace llvm;

namespace collc::rt {

namespace {

/// What the bound needs to know of a float type: its limits in
/// ir/ElemTypes.def, with the unit roundoff 2^-Digits (never asked of an
/// integer type).
struct FloatFormat {
  double UnitRoundoff;
  double MinSubnormal;
  double MaxFinite;
};

FloatFormat formatOf(ElemType T) {
  return visitElemType(T, [](auto E) -> FloatFormat {
    using Traits = decltype(E);
    if constexpr (Traits::IsFloat)
      return {std::ldexp(1.0, -int(Traits::Limits.Digits)), Traits::Limits.MinSubnormal,
              Traits::Limits.MaxFinite};
    else
      return {0, 0, 0};
  });
}

/// Element \p I of float type \p T at \p P, exactly, as a double.
double loadFloat(ElemType T, const char *P, uint64_t I) {
  return visitElemType(T, [&](auto E) -> double {
    using Traits = decltype(E);
    using S = typename Traits::Storage;
    if constexpr (Traits::IsFloat) {
      S V;
      std::memcpy(&V, P + I * sizeof(S), sizeof(S));
      return Traits::load(V);
    } else {
      return 0;
    }
  });
}

/// Whether no source of element \p I is an infinity (or NaN): then an
/// infinite result can only be an overflow.
bool sourcesFinite(const ReductionSources &R, uint64_t I) {
  for (unsigned K = 0; K != R.N; ++K)
    if (!std::isfinite(loadFloat(R.T, R.Srcs[K], R.First + I)))
      return false;
  return true;
}

double gamma(unsigned K, double U) {
  double KU = double(K) * U;
  return KU >= 1 ? std::numeric_limits<double>::infinity() : KU / (1 - KU);
}

/// The largest |got - ref| allowed for element \p I whose results have
/// magnitude at most \p M.
double boundFor(const ReductionSources &R, uint64_t I, double M, ReductionOrder Order) {
  FloatFormat F = formatOf(R.T);
  bool Narrow = R.T != ElemType::F32 && R.T != ElemType::F64;
  double UAcc = R.T == ElemType::F64 ? formatOf(ElemType::F64).UnitRoundoff
                : (R.T == ElemType::F32 || (Narrow && Order.NarrowInF32))
                    ? formatOf(ElemType::F32).UnitRoundoff
                    : F.UnitRoundoff;
  unsigned K =
      (R.N ? R.N - 1 : 0) + (R.Op == ReduceOp::Avg ? 1 : 0) + (R.Op == ReduceOp::PremulSum ? 2 : 0);
  double G = gamma(K, UAcc);
  double Spread; // how far one computed result may be from the exact one
  if (R.Op == ReduceOp::Prod) {
    Spread = G / (1 - std::min(G, 0.5)) * M; // |exact| <= M / (1 - G)
  } else {
    double Scale = R.Op == ReduceOp::PremulSum ? std::fabs(R.Scale) : 1.0;
    double S = 0;
    for (unsigned K = 0; K != R.N; ++K)
      S += std::fabs(loadFloat(R.T, R.Srcs[K], R.First + I)) * Scale;
    if (R.Op == ReduceOp::Avg)
      S /= R.N;
    Spread = G * S;
  }
  return 2 * (Spread + F.UnitRoundoff * M + F.MinSubnormal);
}

} // namespace

ReducedElementVerdict checkReducedElement(const ReductionSources &R, uint64_t I, const char *Got,
                                          const char *Ref, ReductionOrder Order) {
  unsigned Size = elemTypeBytes(R.T);
  ReducedElementVerdict V;
  V.Acceptable = std::memcmp(Got, Ref, Size) == 0;
  if (!isFloatType(R.T))
    return V; // wrapping integer arithmetic is exact in any order
  double G = loadFloat(R.T, Got, 0), W = loadFloat(R.T, Ref, 0);
  bool Narrow = R.T != ElemType::F32 && R.T != ElemType::F64;
  bool SameArithmetic = Order.RankOrdered && (!Narrow || Order.NarrowInF32);
  if (SameArithmetic)
    return V;
  if (std::isnan(G) || std::isnan(W)) {
    V.Acceptable = std::isnan(G) && std::isnan(W); // any NaN payload
    return V;
  }
  if (R.Op == ReduceOp::Min || R.Op == ReduceOp::Max) {
    V.Acceptable = G == W; // exact, but -0 and +0 are the same value
    return V;
  }
  V.Exact = false;
  if (std::isinf(G) && std::isinf(W)) {
    V.Bound = 0;
    V.Acceptable = G == W;
    return V;
  }
  FloatFormat F = formatOf(R.T);
  if (std::isinf(G) || std::isinf(W)) {
    // An overflow in one order only: the finite one lies near the largest
    // finite value, on the infinity's side.
    double Finite = std::isinf(G) ? W : G, Inf = std::isinf(G) ? G : W;
    V.Bound = boundFor(R, I, F.MaxFinite, Order);
    V.Acceptable = sourcesFinite(R, I) && std::signbit(Finite) == std::signbit(Inf) &&
                   std::fabs(Finite) + V.Bound >= F.MaxFinite;
    return V;
  }
  V.Bound = boundFor(R, I, std::max(std::fabs(G), std::fabs(W)), Order);
  V.Acceptable = std::fabs(G - W) <= V.Bound;
  return V;
}

Optional<UnacceptableElement> firstUnacceptable(const ReductionSources &R, ArrayRef<char> Got,
                                                ArrayRef<char> Want, ReductionOrder Order) {
  unsigned Size = elemTypeBytes(R.T);
  // Equal bytes are always acceptable: the bound is computed only where
  // they differ, so the exact case costs one memcmp.
  if (Want.empty() || std::memcmp(Got.data(), Want.data(), Want.size()) == 0)
    return None;
  for (uint64_t I = 0, E = Want.size() / Size; I != E; ++I) {
    const char *G = Got.data() + I * Size, *W = Want.data() + I * Size;
    if (std::memcmp(G, W, Size) == 0)
      continue;
    ReducedElementVerdict V = checkReducedElement(R, I, G, W, Order);
    if (!V.Acceptable)
      return UnacceptableElement{I, V};
  }
  return None;
}

std::string describeBound(const ReducedElementVerdict &V) {
  if (V.Exact)
    return "bit-exact";
  return formatv("|got - expected| <= {0:e}", V.Bound).str();
}

} // namespace collc::rt
