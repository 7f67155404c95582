//===- runtime/exec/DigestHandshake.h - Every rank runs the same plan -*- C++ -*-===//
//
// Before the first replay, every backend's executor gathers each rank's
// plan digest (two words) from every rank and refuses to run on a
// mismatch, naming which ranks run which plan. The gathering is the
// backend's; the words and the verdict are here.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIGESTHANDSHAKE_H
#define COLLC_RUNTIME_DIGESTHANDSHAKE_H

#include "compiler/plan/Plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>

namespace collc::rt {

/// The two words rank \p P contributes.
std::array<uint32_t, 2> digestWords(const plan::Plan &P);

/// \p All holds every rank's two words, rank by rank. A Mismatch error
/// names the ranks of each digest and blames the first rank that differs
/// from \p Rank.
llvm::Error compareDigests(const plan::Plan &P, int64_t Rank, llvm::ArrayRef<uint32_t> All);

} // namespace collc::rt

#endif
