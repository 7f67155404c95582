//===- ir/NamedRows.h - Lookups in the tables generated from .def files -*- C++ -*-===//
//
// The vocabulary tables (Collectives.def, ElemTypes.def, ReduceOps.def)
// become arrays of rows in enum order, each with a Name: the enumerator of
// a name is its row's index.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_NAMEDROWS_H
#define COLLC_IR_NAMEDROWS_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace collc {

/// The enumerator whose row in \p Rows is named \p Name, if any.
template <typename Enum, typename Row, size_t N>
llvm::Optional<Enum> enumNamed(const Row (&Rows)[N], llvm::StringRef Name) {
  for (size_t I = 0; I != N; ++I)
    if (Name == Rows[I].Name)
      return Enum(I);
  return llvm::None;
}

} // namespace collc

#endif // COLLC_IR_NAMEDROWS_H
