//===- ir/PremulFactor.h - What premul_sum's factor means per element type -*- C++ -*-===//
//
// premul_sum multiplies every rank's input by a factor before it sums
// them. The factor is a value of the element type, as NCCL reads it
// (ncclRedOpCreatePreMulSum takes the scalar in the op's data type, for
// every type, fp8 and the integers included):
//  - a floating type: the program's number rounded to the nearest value of
//    the element type; it must be finite there, and a factor that is not
//    zero must not round to zero;
//  - an integer type: an integer in the element type's range, exactly. A
//    non-integral factor (0.5 over i32) has no value of the type, and
//    truncating it would silently zero or skew every result: it is refused.
//    The products and the sums then wrap, as every integer reduction does.
// The verifier refuses a program, the plan reader a plan, and every driver
// a call whose factor breaks these rules, all with this one message; the
// CPU backends and NCCL then multiply by the same value
// (runtime/exec/PremulFactor.h gives it in each backend's arithmetic).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_PREMULFACTOR_H
#define COLLC_IR_PREMULFACTOR_H

#include "ir/Types.h"

#include <optional>
#include <string>

namespace collc {

/// Why \p Factor is no premul_sum factor over element type \p T
/// ("premul_sum(0.5) over i32: an integer type's factor must be an integer
/// ..."), or nothing when it is one.
std::optional<std::string> premulFactorProblem(ElemType T, double Factor);

} // namespace collc

#endif
