//===- runtime/exec/ElementTraits.h - An element type as C++ sees it -*- C++ -*-===//
//
// What the host arithmetic needs of each element type, generated from
// ir/ElemTypes.def: the C++ type that holds an element (Storage), the one
// its arithmetic runs in (Acc: f32 for the narrow floats, which are held as
// bits), the conversions between them, and a float's limits.
// visitElemType is the one switch over a run-time ElemType: code that
// treats types differently asks it for the traits and lets a template do
// the rest, so a new row in the table reaches every backend at once.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_ELEMENTTRAITS_H
#define COLLC_RUNTIME_EXEC_ELEMENTTRAITS_H

#include "ir/Types.h"
#include "runtime/exec/ElementConversion.h"

#include "llvm/Support/ErrorHandling.h"

#include <cstdint>
#include <type_traits>

namespace collc::rt {

/// What a float type represents: the bits of precision (the implicit one
/// included), the smallest positive subnormal, the largest finite value.
struct FloatLimits {
  unsigned Digits;
  double MinSubnormal;
  double MaxFinite;
};

/// A type computed in its own C++ type: the integers, f32 and f64.
template <ElemType T, typename S> struct NativeElement {
  static constexpr ElemType Type = T;
  using Storage = S;
  using Acc = S;
  static constexpr bool IsFloat = std::is_floating_point_v<S>;
  static constexpr bool IsNarrowFloat = false;
  static Acc load(Storage V) { return V; }
  static Storage store(Acc V) { return V; }
};

/// A float held as bits and computed in f32 (f16, bf16, fp8).
template <ElemType T, typename S, float (*Decode)(S), S (*Encode)(float)>
struct NarrowFloatElement {
  static constexpr ElemType Type = T;
  using Storage = S;
  using Acc = float;
  static constexpr bool IsFloat = true;
  static constexpr bool IsNarrowFloat = true;
  static Acc load(Storage V) { return Decode(V); }
  static Storage store(Acc V) { return Encode(V); }
};

template <ElemType T> struct ElementTraits;

#define COLLC_INT_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                         \
  template <> struct ElementTraits<ElemType::Enum> : NativeElement<ElemType::Enum, Storage> {};
#define COLLC_NATIVE_FLOAT(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite)    \
  template <> struct ElementTraits<ElemType::Enum> : NativeElement<ElemType::Enum, Storage> {      \
    static constexpr FloatLimits Limits{Digits, MinSubnormal, MaxFinite};                          \
  };
#define COLLC_NARROW_FLOAT(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite,    \
                           Decode, Encode)                                                         \
  template <>                                                                                      \
  struct ElementTraits<ElemType::Enum>                                                             \
      : NarrowFloatElement<ElemType::Enum, Storage, Decode, Encode> {                              \
    static constexpr FloatLimits Limits{Digits, MinSubnormal, MaxFinite};                          \
  };
#include "ir/ElemTypes.def"

/// Calls \p Fn with the ElementTraits of \p T (a value of that empty type)
/// and returns what it returns, which must be one type for every T.
template <typename F> decltype(auto) visitElemType(ElemType T, F &&Fn) {
  switch (T) {
#define COLLC_ELEM_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                        \
  case ElemType::Enum:                                                                             \
    return Fn(ElementTraits<ElemType::Enum>());
#include "ir/ElemTypes.def"
  }
  llvm_unreachable("an element type outside ir/ElemTypes.def");
}

} // namespace collc::rt

#endif
