//===- runtime/exec/PremulFactor.h - premul_sum's factor in each backend -*- C++ -*-===//
//
// premul_sum's factor is a value of the element type (ir/PremulFactor.h
// says which factors are, and refuses the others). Here is that value as
// each backend multiplies by it: in its accumulation type (the host
// backends and the reference: f32 for the narrow floats, the type itself
// otherwise), and as the bytes of the element type that NCCL's
// ncclRedOpCreatePreMulSum reads. One definition, so the CPU backends, the
// reference and NCCL multiply by the same number: 0.3 over bf16 is
// 0.30078125 everywhere, 3 over u8 is 3.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_PREMULFACTOR_H
#define COLLC_RUNTIME_EXEC_PREMULFACTOR_H

#include "ir/Types.h"

#include <array>
#include <cstdint>
#include <type_traits>

namespace collc::rt {

/// \p Factor rounded to element type \p T, exactly as a double. \p Factor
/// has passed premulFactorProblem(T, Factor).
double premulFactorValue(ElemType T, double Factor);

/// The factor over element type \p T in accumulation type \p A (the type
/// itself for integers, f32 or f64 for floats). Exact: an integer factor
/// is an integer of the type's range, and a float one a value of it.
template <typename A> A premulFactorAs(ElemType T, double Factor) {
  double V = premulFactorValue(T, Factor);
  if constexpr (std::is_integral_v<A> && std::is_signed_v<A>)
    return A(int64_t(V));
  else if constexpr (std::is_integral_v<A>)
    return A(uint64_t(V));
  else
    return A(V);
}

/// The factor as a value of \p T in its own bytes (little-endian, in the
/// first elemTypeBytes(T) of 8; the rest zero): the host scalar of
/// ncclRedOpCreatePreMulSum.
std::array<unsigned char, 8> premulFactorBytes(ElemType T, double Factor);

} // namespace collc::rt

#endif
