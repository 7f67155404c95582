//===- runtime/exec/PremulFactor.cpp - premul_sum's factor in each backend -===//

#include "runtime/exec/PremulFactor.h"

#include "runtime/exec/ElementTraits.h"

#include <cstring>

namespace collc::rt {

std::array<unsigned char, 8> premulFactorBytes(ElemType T, double Factor) {
  std::array<unsigned char, 8> Out{};
  visitElemType(T, [&](auto E) {
    using Traits = decltype(E);
    // A float rounds to the type; an integer converts exactly
    // (premulFactorProblem refused a fraction and a value out of range).
    typename Traits::Storage V = Traits::store(typename Traits::Acc(Factor));
    static_assert(sizeof(V) <= sizeof(Out));
    std::memcpy(Out.data(), &V, sizeof(V));
  });
  return Out;
}

double premulFactorValue(ElemType T, double Factor) {
  std::array<unsigned char, 8> Bytes = premulFactorBytes(T, Factor);
  return visitElemType(T, [&](auto E) {
    using Traits = decltype(E);
    typename Traits::Storage V;
    std::memcpy(&V, Bytes.data(), sizeof(V));
    // Exact: a value of any type but the 64-bit integers is a double, and
    // an integer factor came from one.
    return double(Traits::load(V));
  });
}

} // namespace collc::rt
