//===- runtime/exec/ElementConversion.h - Narrow floats to and from f32 -*- C++ -*-===//
//
// f16 (IEEE binary16), bf16, and the OCP 8-bit floats e4m3 (FN: no infinity,
// max 448) and e5m2 (IEEE-like). Reductions over these accumulate in f32 and
// round once at the end: round to nearest even; fp8 saturates to the largest
// finite value (as CUDA's __NV_SATFINITE), NaN stays NaN.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_ELEMENTCONVERSION_H
#define COLLC_RUNTIME_EXEC_ELEMENTCONVERSION_H

#include <cstdint>

namespace collc::rt {

float halfToFloat(uint16_t H);
uint16_t floatToHalf(float F);
float bf16ToFloat(uint16_t B);
uint16_t floatToBf16(float F);
float e4m3ToFloat(uint8_t V);
uint8_t floatToE4m3(float F);
float e5m2ToFloat(uint8_t V);
uint8_t floatToE5m2(float F);

} // namespace collc::rt

#endif
