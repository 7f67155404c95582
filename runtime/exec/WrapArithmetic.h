//===- runtime/exec/WrapArithmetic.h - Reduction arithmetic of every backend -*- C++ -*-===//
//
// The element arithmetic of collc's reductions, as every host backend and
// the reference checker (runtime/verify) compute it: integers wrap (in the
// unsigned type, widened past int promotion, so there is no undefined
// behaviour), floats round once per operation, avg divides the sum by the
// rank count (integers through 64 bits, truncating). One definition, so a
// backend and the reference cannot drift apart.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_WRAPARITHMETIC_H
#define COLLC_RUNTIME_EXEC_WRAPARITHMETIC_H

#include <cstdint>
#include <type_traits>

namespace collc::rt {

template <typename A> A addWrap(A X, A Y) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    return A(U(X) + U(Y));
  } else {
    return X + Y;
  }
}

template <typename A> A mulWrap(A X, A Y) {
  if constexpr (std::is_integral_v<A>) {
    using U = std::make_unsigned_t<A>;
    // Promote to at least unsigned int so the product of two shorts does not
    // overflow a signed int.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return A(U(W(U(X)) * W(U(Y))));
  } else {
    return X * Y;
  }
}

/// avg's last step: \p Sum over \p Ranks ranks.
template <typename A> A averageOf(A Sum, unsigned Ranks) {
  if constexpr (std::is_integral_v<A>) {
    using W = std::conditional_t<std::is_signed_v<A>, int64_t, uint64_t>;
    return A(W(Sum) / W(Ranks));
  } else {
    return Sum / A(Ranks);
  }
}

} // namespace collc::rt

#endif
