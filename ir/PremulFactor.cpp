//===- ir/PremulFactor.cpp - What premul_sum's factor means per element type ===//

#include "ir/PremulFactor.h"

#include "llvm/Support/FormatVariadic.h"

#include <cfloat>
#include <cmath>
#include <cstdint>

using namespace llvm;

namespace collc {

namespace {

/// The finite range of a floating type, and its smallest subnormal.
struct FloatRange {
  double MaxFinite;
  double MinSubnormal;
};

FloatRange floatRange(ElemType T) {
  switch (T) {
  case ElemType::F16:
    return {65504.0, std::ldexp(1.0, -24)};
  case ElemType::BF16:
    return {3.3895313892515355e38, std::ldexp(1.0, -133)};
  case ElemType::F8E4M3:
    return {448.0, std::ldexp(1.0, -9)};
  case ElemType::F8E5M2:
    return {57344.0, std::ldexp(1.0, -16)};
  case ElemType::F32:
    return {double(FLT_MAX), double(FLT_TRUE_MIN)};
  default: // f64
    return {DBL_MAX, DBL_TRUE_MIN};
  }
}

bool isSignedInteger(ElemType T) {
  return T == ElemType::I8 || T == ElemType::I32 || T == ElemType::I64;
}

} // namespace

std::optional<std::string> premulFactorProblem(ElemType T, double Factor) {
  std::string Head =
      formatv("premul_sum({0}) over {1}: ", formatExactDouble(Factor), elemTypeName(T));
  if (!std::isfinite(Factor))
    return Head + "the factor is not a finite number";
  if (isFloatType(T)) {
    FloatRange Range = floatRange(T);
    if (std::fabs(Factor) > Range.MaxFinite)
      return Head + formatv("the factor is a value of the element type, whose largest is {0}",
                            formatExactDouble(Range.MaxFinite))
                        .str();
    // Halfway to the smallest subnormal rounds to zero (to even).
    if (Factor != 0 && std::fabs(Factor) <= Range.MinSubnormal / 2)
      return Head + formatv("the factor is a value of the element type, in which it rounds to "
                            "0 (the smallest is {0})",
                            formatExactDouble(Range.MinSubnormal))
                        .str();
    return std::nullopt;
  }
  // 2^(bits - 1) and 2^bits are exact doubles for every integer width.
  unsigned Bits = 8 * elemTypeBytes(T);
  double Lowest = isSignedInteger(T) ? -std::ldexp(1.0, int(Bits) - 1) : 0.0;
  double End = std::ldexp(1.0, isSignedInteger(T) ? int(Bits) - 1 : int(Bits));
  if (Factor != std::trunc(Factor))
    return Head + "an integer type's factor must be an integer of that type (NCCL multiplies by "
                  "a value of the element type; a fraction would be cut off and skew every "
                  "result): scale in a floating type, or scale the result";
  if (Factor < Lowest || Factor >= End) {
    int64_t Highest = INT64_MAX >> (64 - Bits);
    std::string Range = isSignedInteger(T) ? formatv("{0} to {1}", -Highest - 1, Highest).str()
                                           : formatv("0 to {0}", UINT64_MAX >> (64 - Bits)).str();
    return Head + "the factor is a value of the element type, which holds " + Range;
  }
  return std::nullopt;
}

} // namespace collc
