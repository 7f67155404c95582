//===- runtime/exec/ElementConversion.cpp - Narrow floats to and from f32 -------===//
//
// Bit manipulation, written out rather than relying on _Float16 or
// __bf16 so it behaves the same with every compiler and on every CPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/ElementConversion.h"

#include <array>
#include <cmath>
#include <cstring>

namespace collc::rt {

static uint32_t bitsOf(float F) {
  uint32_t U;
  std::memcpy(&U, &F, 4);
  return U;
}

static float floatOf(uint32_t U) {
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

float halfToFloat(uint16_t H) {
  uint32_t Sign = uint32_t(H & 0x8000) << 16;
  uint32_t Exp = (H >> 10) & 0x1f;
  uint32_t Man = H & 0x3ff;
  if (Exp == 0x1f) // inf or NaN
    return floatOf(Sign | 0x7f800000 | (Man << 13));
  if (Exp == 0) {
    if (Man == 0)
      return floatOf(Sign);
    // Subnormal: value = Man * 2^-24.
    float V = float(Man) * 5.9604644775390625e-8f;
    return Sign ? -V : V;
  }
  return floatOf(Sign | ((Exp + 112) << 23) | (Man << 13));
}

/// A float to a narrower float with \p ManBits mantissa bits, exponent bias
/// \p Bias and \p ExpBits exponent bits, rounded to nearest even. Returns
/// the magnitude bits (without sign). \p MaxFinite is the largest finite
/// magnitude pattern; \p HasInf chooses overflow to infinity or saturation.
static uint32_t narrow(float F, int ExpBits, int ManBits, int Bias, uint32_t MaxFinite, bool HasInf,
                       uint32_t NaN) {
  uint32_t U = bitsOf(F) & 0x7fffffff;
  if (U > 0x7f800000)
    return NaN;
  uint32_t InfOrMax = HasInf ? ((1u << ExpBits) - 1) << ManBits : MaxFinite;
  if (U == 0x7f800000)
    return HasInf ? InfOrMax : MaxFinite;
  float A = floatOf(U);
  // Smallest normal of the target: 2^(1-Bias).
  float MinNormal = std::ldexp(1.0f, 1 - Bias);
  uint32_t Out;
  if (A < MinNormal) {
    // Subnormal in the target: units of 2^(1-Bias-ManBits).
    float Scaled = A / std::ldexp(1.0f, 1 - Bias - ManBits);
    Out = uint32_t(std::nearbyint(Scaled)); // round to nearest even
  } else {
    int E = int((U >> 23) & 0xff) - 127;
    uint32_t Man = U & 0x7fffff;
    int Shift = 23 - ManBits;
    uint32_t Kept = Man >> Shift;
    uint32_t Rest = Man & ((1u << Shift) - 1);
    uint32_t Half = 1u << (Shift - 1);
    Out = (uint32_t(E + Bias) << ManBits) | Kept;
    if (Rest > Half || (Rest == Half && (Kept & 1)))
      ++Out; // may carry into the exponent, which is right
  }
  if (Out > MaxFinite)
    return InfOrMax;
  return Out;
}

uint16_t floatToHalf(float F) {
  uint32_t Sign = (bitsOf(F) >> 16) & 0x8000;
  return uint16_t(Sign | narrow(F, 5, 10, 15, 0x7bff, /*HasInf=*/true, 0x7e00));
}

float bf16ToFloat(uint16_t B) { return floatOf(uint32_t(B) << 16); }

uint16_t floatToBf16(float F) {
  uint32_t U = bitsOf(F);
  if ((U & 0x7fffffff) > 0x7f800000)
    return uint16_t((U >> 16) | 0x40); // quiet NaN
  uint32_t Rounding = 0x7fff + ((U >> 16) & 1);
  return uint16_t((U + Rounding) >> 16);
}

/// Decodes every fp8 value once: a table lookup per element in the
/// reduction loops instead of an ldexp.
template <float (*Decode)(uint8_t)> static float viaTable(uint8_t V) {
  static const auto Table = [] {
    std::array<float, 256> T;
    for (unsigned I = 0; I != 256; ++I)
      T[I] = Decode(uint8_t(I));
    return T;
  }();
  return Table[V];
}

static float decodeE4m3(uint8_t V) {
  uint32_t Sign = V & 0x80;
  uint32_t Exp = (V >> 3) & 0xf;
  uint32_t Man = V & 0x7;
  if (Exp == 0xf && Man == 0x7)
    return std::nanf("");
  float R =
      Exp == 0 ? std::ldexp(float(Man), -9) : std::ldexp(1.0f + float(Man) / 8.0f, int(Exp) - 7);
  return Sign ? -R : R;
}

float e4m3ToFloat(uint8_t V) { return viaTable<decodeE4m3>(V); }

uint8_t floatToE4m3(float F) {
  uint32_t Sign = (bitsOf(F) >> 24) & 0x80;
  // Largest finite: 0x7e (448); 0x7f is NaN; no infinity (saturate).
  return uint8_t(Sign | narrow(F, 4, 3, 7, 0x7e, /*HasInf=*/false, 0x7f));
}

static float decodeE5m2(uint8_t V) { return halfToFloat(uint16_t(V) << 8); }
float e5m2ToFloat(uint8_t V) { return viaTable<decodeE5m2>(V); }

uint8_t floatToE5m2(float F) {
  uint32_t Sign = (bitsOf(F) >> 24) & 0x80;
  // Saturating like __NV_SATFINITE: overflow gives the largest finite (57344).
  uint32_t U = bitsOf(F) & 0x7fffffff;
  if (U > 0x7f800000)
    return uint8_t(Sign | 0x7e);
  return uint8_t(Sign | narrow(F, 5, 2, 15, 0x7b, /*HasInf=*/false, 0x7e));
}

} // namespace collc::rt
