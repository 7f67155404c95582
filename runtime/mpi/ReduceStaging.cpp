//===- runtime/mpi/ReduceStaging.cpp - Host arithmetic around MPI's reductions -===//

#include "runtime/mpi/ReduceStaging.h"

#include "runtime/exec/ElementConversion.h"
#include "runtime/exec/PremulFactor.h"
#include "runtime/exec/WrapArithmetic.h"

#include <cstring>
#include <type_traits>

namespace collc::rt::mpi {

namespace {

bool isNarrow(ElemType T) {
  return T == ElemType::F16 || T == ElemType::BF16 || T == ElemType::F8E4M3 ||
         T == ElemType::F8E5M2;
}

float narrowToFloat(ElemType T, const char *P) {
  uint16_t H = 0;
  switch (T) {
  case ElemType::F16:
    std::memcpy(&H, P, 2);
    return halfToFloat(H);
  case ElemType::BF16:
    std::memcpy(&H, P, 2);
    return bf16ToFloat(H);
  case ElemType::F8E4M3:
    return e4m3ToFloat(uint8_t(*P));
  default:
    return e5m2ToFloat(uint8_t(*P));
  }
}

void floatToNarrow(ElemType T, float F, char *P) {
  uint16_t H = 0;
  switch (T) {
  case ElemType::F16:
    H = floatToHalf(F);
    std::memcpy(P, &H, 2);
    return;
  case ElemType::BF16:
    H = floatToBf16(F);
    std::memcpy(P, &H, 2);
    return;
  case ElemType::F8E4M3:
    *P = char(floatToE4m3(F));
    return;
  default:
    *P = char(floatToE5m2(F));
    return;
  }
}

template <typename A>
void scaleAll(ElemType T, double Scale, const char *Src, uint64_t Count, char *Wire) {
  A S = premulFactorAs<A>(T, Scale);
  for (uint64_t I = 0; I != Count; ++I) {
    A X;
    std::memcpy(&X, Src + I * sizeof(A), sizeof(A));
    X = mulWrap(X, S);
    std::memcpy(Wire + I * sizeof(A), &X, sizeof(A));
  }
}

template <typename A> void averageAll(unsigned N, const char *Wire, uint64_t Count, char *Dst) {
  for (uint64_t I = 0; I != Count; ++I) {
    A X;
    std::memcpy(&X, Wire + I * sizeof(A), sizeof(A));
    X = averageOf(X, N);
    std::memcpy(Dst + I * sizeof(A), &X, sizeof(A));
  }
}

/// Calls \p F with a value of \p T's C++ type (plain types only).
template <typename F> void withPlainType(ElemType T, F &&Fn) {
  switch (T) {
  case ElemType::F32:
    return Fn(float());
  case ElemType::F64:
    return Fn(double());
  case ElemType::I8:
    return Fn(int8_t());
  case ElemType::U8:
    return Fn(uint8_t());
  case ElemType::I32:
    return Fn(int32_t());
  case ElemType::U32:
    return Fn(uint32_t());
  case ElemType::I64:
    return Fn(int64_t());
  case ElemType::U64:
    return Fn(uint64_t());
  default:
    return;
  }
}

} // namespace

/// Narrow floats accumulate in f32 (min and max round nothing).
static bool widens(ElemType T, ReduceOp Op) {
  return isNarrow(T) && Op != ReduceOp::Min && Op != ReduceOp::Max;
}

ElemType wireType(ElemType T, ReduceOp Op) { return widens(T, Op) ? ElemType::F32 : T; }

bool stagesInput(ElemType T, ReduceOp Op) { return widens(T, Op) || Op == ReduceOp::PremulSum; }

bool stagesOutput(ElemType T, ReduceOp Op) { return widens(T, Op) || Op == ReduceOp::Avg; }

void stageInput(ElemType T, ReduceOp Op, double Scale, const char *Src, uint64_t Count,
                char *Wire) {
  bool Premul = Op == ReduceOp::PremulSum;
  if (widens(T, Op)) {
    unsigned Size = elemTypeBytes(T);
    float S = Premul ? premulFactorAs<float>(T, Scale) : 1.0f;
    for (uint64_t I = 0; I != Count; ++I) {
      float F = narrowToFloat(T, Src + I * Size);
      if (Premul)
        F *= S;
      std::memcpy(Wire + I * 4, &F, 4);
    }
    return;
  }
  if (!Premul) {
    std::memcpy(Wire, Src, Count * elemTypeBytes(T));
    return;
  }
  withPlainType(T, [&](auto V) { scaleAll<decltype(V)>(T, Scale, Src, Count, Wire); });
}

void finishOutput(ElemType T, ReduceOp Op, unsigned Ranks, const char *Wire, uint64_t Count,
                  char *Dst) {
  bool Avg = Op == ReduceOp::Avg;
  if (widens(T, Op)) {
    unsigned Size = elemTypeBytes(T);
    for (uint64_t I = 0; I != Count; ++I) {
      float F;
      std::memcpy(&F, Wire + I * 4, 4);
      if (Avg)
        F /= float(Ranks);
      floatToNarrow(T, F, Dst + I * Size);
    }
    return;
  }
  if (!Avg) {
    if (Wire != Dst)
      std::memcpy(Dst, Wire, Count * elemTypeBytes(T));
    return;
  }
  withPlainType(T, [&](auto V) { averageAll<decltype(V)>(Ranks, Wire, Count, Dst); });
}

} // namespace collc::rt::mpi
