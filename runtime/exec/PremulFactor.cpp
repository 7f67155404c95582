//===- runtime/exec/PremulFactor.cpp - premul_sum's factor in each backend -===//

#include "runtime/exec/PremulFactor.h"

#include "runtime/exec/ElementConversion.h"

#include <cstring>

namespace collc::rt {

namespace {

/// \p V's bytes, as a value of type \p S, into \p Out.
template <typename S> void store(S V, std::array<unsigned char, 8> &Out) {
  static_assert(sizeof(S) <= 8);
  std::memcpy(Out.data(), &V, sizeof(S));
}

} // namespace

std::array<unsigned char, 8> premulFactorBytes(ElemType T, double Factor) {
  std::array<unsigned char, 8> Out{};
  switch (T) {
  case ElemType::F32:
    store(float(Factor), Out);
    break;
  case ElemType::F64:
    store(Factor, Out);
    break;
  case ElemType::F16:
    store(floatToHalf(float(Factor)), Out);
    break;
  case ElemType::BF16:
    store(floatToBf16(float(Factor)), Out);
    break;
  case ElemType::F8E4M3:
    store(floatToE4m3(float(Factor)), Out);
    break;
  case ElemType::F8E5M2:
    store(floatToE5m2(float(Factor)), Out);
    break;
  // Integers: exact (premulFactorProblem refused a fraction and a value out
  // of range), so the conversions below are defined.
  case ElemType::I8:
    store(int8_t(Factor), Out);
    break;
  case ElemType::U8:
    store(uint8_t(Factor), Out);
    break;
  case ElemType::I32:
    store(int32_t(Factor), Out);
    break;
  case ElemType::U32:
    store(uint32_t(Factor), Out);
    break;
  case ElemType::I64:
    store(int64_t(Factor), Out);
    break;
  case ElemType::U64:
    store(uint64_t(Factor), Out);
    break;
  }
  return Out;
}

double premulFactorValue(ElemType T, double Factor) {
  std::array<unsigned char, 8> B = premulFactorBytes(T, Factor);
  auto Load = [&](auto V) {
    std::memcpy(&V, B.data(), sizeof(V));
    return V;
  };
  switch (T) {
  case ElemType::F32:
    return double(Load(float()));
  case ElemType::F64:
    return Load(double());
  case ElemType::F16:
    return double(halfToFloat(Load(uint16_t())));
  case ElemType::BF16:
    return double(bf16ToFloat(Load(uint16_t())));
  case ElemType::F8E4M3:
    return double(e4m3ToFloat(Load(uint8_t())));
  case ElemType::F8E5M2:
    return double(e5m2ToFloat(Load(uint8_t())));
  default: // an integer: the factor itself (exact)
    return Factor;
  }
}

} // namespace collc::rt
