//===- runtime/gloo/GlooReduction.cpp - A reduction as it travels over Gloo -===//
//
// The arithmetic is runtime/verify's reference, element by element: the same
// wrapping integer add and multiply, the same f32 accumulation for narrow
// floats, the same avg division. Loads and stores go through memcpy: Gloo
// hands us offsets into byte buffers with no alignment promise.
//
//===----------------------------------------------------------------------===//

#include "runtime/gloo/GlooReduction.h"

#include "runtime/exec/ElementTraits.h"
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

/// Gloo's pairwise function for \p Op over \p A: partial results combine
/// by the op's Combine in ir/ReduceOps.def (avg and premul_sum: a sum).
template <typename A> PairReduce reducerFor(ReduceOp Op) {
  switch (Op) {
#define COLLC_REDUCE_OP(Enum, Spelling, Combine, Mpi)                                              \
  case ReduceOp::Enum:                                                                             \
    return pairwise<A, ReduceOp::Combine>;
#include "ir/ReduceOps.def"
  }
  return pairwise<A, ReduceOp::Sum>;
}

/// f16, bf16 and fp8: they travel and accumulate as f32.
bool isNarrowFloat(ElemType T) {
  return visitElemType(T, [](auto E) { return decltype(E)::IsNarrowFloat; });
}

} // namespace

ElemType wireType(ElemType T) { return isNarrowFloat(T) ? ElemType::F32 : T; }

bool needsStaging(ElemType T, ReduceOp Op) { return isNarrowFloat(T) || takesScale(Op); }

bool needsFinish(ElemType T, ReduceOp Op) { return needsStaging(T, Op) || Op == ReduceOp::Avg; }

void toWire(ElemType T, ReduceOp Op, double Scale, const char *Src, char *Wire, uint64_t Count) {
  visitElemType(T, [&](auto E) {
    using Traits = decltype(E);
    using A = typename Traits::Acc;
    A Factor = A(Scale);
    bool Scaled = takesScale(Op);
    for (uint64_t I = 0; I != Count; ++I) {
      A V = Traits::load(load<typename Traits::Storage>(Src, I));
      store<A>(Wire, I, Scaled ? mulWrap(V, Factor) : V);
    }
  });
}

void fromWire(ElemType T, ReduceOp Op, unsigned Ranks, const char *Wire, char *Dst,
              uint64_t Count) {
  visitElemType(T, [&](auto E) {
    using Traits = decltype(E);
    using A = typename Traits::Acc;
    for (uint64_t I = 0; I != Count; ++I) {
      A V = load<A>(Wire, I);
      if (Op == ReduceOp::Avg)
        V = averageOf(V, Ranks);
      store<typename Traits::Storage>(Dst, I, Traits::store(V));
    }
  });
}

PairReduce wireReducer(ElemType Wire, ReduceOp Op) {
  return visitElemType(Wire, [&](auto E) { return reducerFor<typename decltype(E)::Acc>(Op); });
}

} // namespace collc::rt::gloo
