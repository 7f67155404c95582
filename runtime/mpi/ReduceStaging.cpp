//===- runtime/mpi/ReduceStaging.cpp - Host arithmetic around MPI's reductions -===//

#include "runtime/mpi/ReduceStaging.h"

#include "runtime/exec/ElementTraits.h"
#include "runtime/exec/WrapArithmetic.h"

#include <cstring>
#include <type_traits>

namespace collc::rt::mpi {

namespace {

template <typename V> V loadAt(const char *P, uint64_t I) {
  V X;
  std::memcpy(&X, P + I * sizeof(V), sizeof(V));
  return X;
}

template <typename V> void storeAt(char *P, uint64_t I, V X) {
  std::memcpy(P + I * sizeof(V), &X, sizeof(V));
}

/// Narrow floats accumulate in f32 (min and max round nothing).
bool widens(ElemType T, ReduceOp Op) {
  bool Narrow = visitElemType(T, [](auto E) { return decltype(E)::IsNarrowFloat; });
  return Narrow && Op != ReduceOp::Min && Op != ReduceOp::Max;
}

} // namespace

ElemType wireType(ElemType T, ReduceOp Op) { return widens(T, Op) ? ElemType::F32 : T; }

bool stagesInput(ElemType T, ReduceOp Op) { return widens(T, Op) || takesScale(Op); }

bool stagesOutput(ElemType T, ReduceOp Op) { return widens(T, Op) || Op == ReduceOp::Avg; }

void stageInput(ElemType T, ReduceOp Op, double Scale, const char *Src, uint64_t Count,
                char *Wire) {
  bool Premul = takesScale(Op);
  if (!widens(T, Op) && !Premul) {
    std::memcpy(Wire, Src, Count * elemTypeBytes(T));
    return;
  }
  // Past the copy a narrow float widens, so the wire holds T's accumulation
  // type (f32 for a narrow float, T itself otherwise); finishOutput alike.
  visitElemType(T, [&](auto E) {
    using Traits = decltype(E);
    using A = typename Traits::Acc;
    A Factor = A(Scale);
    for (uint64_t I = 0; I != Count; ++I) {
      A X = Traits::load(loadAt<typename Traits::Storage>(Src, I));
      storeAt<A>(Wire, I, Premul ? mulWrap(X, Factor) : X);
    }
  });
}

void finishOutput(ElemType T, ReduceOp Op, unsigned Ranks, const char *Wire, uint64_t Count,
                  char *Dst) {
  bool Avg = Op == ReduceOp::Avg;
  if (!widens(T, Op) && !Avg) {
    if (Wire != Dst)
      std::memcpy(Dst, Wire, Count * elemTypeBytes(T));
    return;
  }
  visitElemType(T, [&](auto E) {
    using Traits = decltype(E);
    using A = typename Traits::Acc;
    for (uint64_t I = 0; I != Count; ++I) {
      A X = loadAt<A>(Wire, I);
      storeAt(Dst, I, Traits::store(Avg ? averageOf(X, Ranks) : X));
    }
  });
}

} // namespace collc::rt::mpi
