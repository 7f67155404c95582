//===- runtime/gloo/GlooReduction.cpp - A reduction as it travels over Gloo -===//
//
// The arithmetic is runtime/verify's reference, element by element: the same
// wrapping integer add and multiply, the same f32 accumulation for narrow
// floats, the same avg division. Loads and stores go through memcpy: Gloo
// hands us offsets into byte buffers with no alignment promise.
//
//===----------------------------------------------------------------------===//

#include "runtime/gloo/GlooReduction.h"

#include "runtime/exec/ElementConversion.h"
#include "runtime/exec/PremulFactor.h"
#include "runtime/exec/WrapArithmetic.h"

#include <cstring>
#include <type_traits>

namespace collc::rt::gloo {

namespace {

template <typename A> A load(const void *P, size_t I) {
  A V;
  std::memcpy(&V, static_cast<const char *>(P) + I * sizeof(A), sizeof(A));
  return V;
}
template <typename A> void store(void *P, size_t I, A V) {
  std::memcpy(static_cast<char *>(P) + I * sizeof(A), &V, sizeof(A));
}

template <typename A, ReduceOp Op>
void pairwise(void *Out, const void *X, const void *Y, size_t Count) {
  for (size_t I = 0; I != Count; ++I) {
    A L = load<A>(X, I), R = load<A>(Y, I), V;
    if constexpr (Op == ReduceOp::Prod)
      V = mulWrap(L, R);
    else if constexpr (Op == ReduceOp::Min)
      V = R < L ? R : L;
    else if constexpr (Op == ReduceOp::Max)
      V = R > L ? R : L;
    else
      V = addWrap(L, R); // sum, avg, premul_sum
    store(Out, I, V);
  }
}

template <typename A> PairReduce reducerFor(ReduceOp Op) {
  switch (Op) {
  case ReduceOp::Prod:
    return pairwise<A, ReduceOp::Prod>;
  case ReduceOp::Min:
    return pairwise<A, ReduceOp::Min>;
  case ReduceOp::Max:
    return pairwise<A, ReduceOp::Max>;
  case ReduceOp::Sum:
  case ReduceOp::Avg:
  case ReduceOp::PremulSum:
    break;
  }
  return pairwise<A, ReduceOp::Sum>;
}

/// Calls \p F with a value of the accumulation type of \p T (f32 for the
/// narrow floats) and the conversions to and from its storage.
template <typename F> void withType(ElemType T, F &&Fn) {
  auto Plain = [](auto V) { return V; };
  switch (T) {
  case ElemType::F32:
    return Fn(float(), Plain, Plain, float());
  case ElemType::F64:
    return Fn(double(), Plain, Plain, double());
  case ElemType::I8:
    return Fn(int8_t(), Plain, Plain, int8_t());
  case ElemType::U8:
    return Fn(uint8_t(), Plain, Plain, uint8_t());
  case ElemType::I32:
    return Fn(int32_t(), Plain, Plain, int32_t());
  case ElemType::U32:
    return Fn(uint32_t(), Plain, Plain, uint32_t());
  case ElemType::I64:
    return Fn(int64_t(), Plain, Plain, int64_t());
  case ElemType::U64:
    return Fn(uint64_t(), Plain, Plain, uint64_t());
  case ElemType::F16:
    return Fn(uint16_t(), halfToFloat, floatToHalf, float());
  case ElemType::BF16:
    return Fn(uint16_t(), bf16ToFloat, floatToBf16, float());
  case ElemType::F8E4M3:
    return Fn(uint8_t(), e4m3ToFloat, floatToE4m3, float());
  case ElemType::F8E5M2:
    return Fn(uint8_t(), e5m2ToFloat, floatToE5m2, float());
  }
}

bool isNarrowFloat(ElemType T) { return isFloatType(T) && elemTypeBytes(T) < 4; }

} // namespace

ElemType wireType(ElemType T) { return isNarrowFloat(T) ? ElemType::F32 : T; }

bool needsStaging(ElemType T, ReduceOp Op) {
  return isNarrowFloat(T) || Op == ReduceOp::PremulSum;
}

bool needsFinish(ElemType T, ReduceOp Op) { return needsStaging(T, Op) || Op == ReduceOp::Avg; }

void toWire(ElemType T, ReduceOp Op, double Scale, const char *Src, char *Wire, uint64_t Count) {
  withType(T, [&](auto Stored, auto ToAcc, auto, auto Acc) {
    using S = decltype(Stored);
    using A = decltype(Acc);
    bool Scaled = Op == ReduceOp::PremulSum;
    A Factor = Scaled ? premulFactorAs<A>(T, Scale) : A(1);
    for (uint64_t I = 0; I != Count; ++I) {
      A V = A(ToAcc(load<S>(Src, I)));
      store<A>(Wire, I, Scaled ? mulWrap(V, Factor) : V);
    }
  });
}

void fromWire(ElemType T, ReduceOp Op, unsigned Ranks, const char *Wire, char *Dst,
              uint64_t Count) {
  withType(T, [&](auto Stored, auto, auto FromAcc, auto Acc) {
    using S = decltype(Stored);
    using A = decltype(Acc);
    for (uint64_t I = 0; I != Count; ++I) {
      A V = load<A>(Wire, I);
      if (Op == ReduceOp::Avg)
        V = averageOf(V, Ranks);
      store<S>(Dst, I, S(FromAcc(V)));
    }
  });
}

PairReduce wireReducer(ElemType Wire, ReduceOp Op) {
  PairReduce Fn = nullptr;
  withType(Wire, [&](auto, auto, auto, auto Acc) { Fn = reducerFor<decltype(Acc)>(Op); });
  return Fn;
}

} // namespace collc::rt::gloo
