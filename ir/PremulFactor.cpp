//===- ir/PremulFactor.cpp - What premul_sum's factor means per element type ===//

#include "ir/PremulFactor.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdint>
#include <limits>

using namespace llvm;

namespace collc {

namespace {

/// A floating type's largest finite value and smallest subnormal (the
/// table's columns), or nothing for an integer type.
struct FloatRange {
  double MaxFinite;
  double MinSubnormal;
};

std::optional<FloatRange> floatRange(ElemType T) {
  switch (T) {
#define COLLC_FLOAT_TYPE(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite)      \
  case ElemType::Enum:                                                                             \
    return FloatRange{MaxFinite, MinSubnormal};
#include "ir/ElemTypes.def"
  default:
    return std::nullopt;
  }
}

/// An integer type's values, as doubles: [Lowest, End), End exclusive
/// (2^(bits - 1) and 2^bits are exact doubles for every width), and as the
/// text of an error.
struct IntRange {
  double Lowest;
  double End;
  std::string Text;
};

template <typename S> IntRange intRangeOf() {
  using Limits = std::numeric_limits<S>;
  double End = std::ldexp(1.0, Limits::digits);
  // Widened to 64 bits: 8-bit integers print as numbers, not characters.
  std::string Text =
      Limits::is_signed
          ? formatv("{0} to {1}", int64_t(Limits::min()), int64_t(Limits::max())).str()
          : formatv("0 to {0}", uint64_t(Limits::max())).str();
  return {Limits::is_signed ? -End : 0.0, End, Text};
}

IntRange intRange(ElemType T) {
  switch (T) {
#define COLLC_INT_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                         \
  case ElemType::Enum:                                                                             \
    return intRangeOf<Storage>();
#include "ir/ElemTypes.def"
  default:
    llvm_unreachable("intRange of a floating type");
  }
}

} // namespace

std::optional<std::string> premulFactorProblem(ElemType T, double Factor) {
  std::string Head =
      formatv("premul_sum({0}) over {1}: ", formatExactDouble(Factor), elemTypeName(T));
  if (!std::isfinite(Factor))
    return Head + "the factor is not a finite number";
  if (std::optional<FloatRange> Range = floatRange(T)) {
    if (std::fabs(Factor) > Range->MaxFinite)
      return Head + formatv("the factor is a value of the element type, whose largest is {0}",
                            formatExactDouble(Range->MaxFinite))
                        .str();
    // Halfway to the smallest subnormal rounds to zero (to even).
    if (Factor != 0 && std::fabs(Factor) <= Range->MinSubnormal / 2)
      return Head + formatv("the factor is a value of the element type, in which it rounds to "
                            "0 (the smallest is {0})",
                            formatExactDouble(Range->MinSubnormal))
                        .str();
    return std::nullopt;
  }
  if (Factor != std::trunc(Factor))
    return Head + "an integer type's factor must be an integer of that type (NCCL multiplies by "
                  "a value of the element type; a fraction would be cut off and skew every "
                  "result): scale in a floating type, or scale the result";
  IntRange Range = intRange(T);
  if (Factor < Range.Lowest || Factor >= Range.End)
    return Head + "the factor is a value of the element type, which holds " + Range.Text;
  return std::nullopt;
}

} // namespace collc
