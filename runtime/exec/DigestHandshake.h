//===- runtime/exec/DigestHandshake.h - Every rank runs the same plan -*- C++ -*-===//
//
// Before the first replay, every backend's executor gathers each rank's
// plan digest (two words) from every rank and refuses to run on a
// mismatch, naming which ranks run which plan. The gathering is the
// backend's; the words and the verdict are here.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_DIGESTHANDSHAKE_H
#define COLLC_RUNTIME_EXEC_DIGESTHANDSHAKE_H

#include "plan/Plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace collc::rt {

/// The two words rank \p P contributes.
std::array<uint32_t, 2> digestWords(const plan::Plan &P);

/// \p All holds every rank's two words, rank by rank. A Mismatch error
/// names the ranks of each digest and blames the first rank that differs
/// from \p Rank.
llvm::Error compareDigests(const plan::Plan &P, int64_t Rank, llvm::ArrayRef<uint32_t> All);

/// "ranks 0,2 run A; ranks 1 run B": ranks 0..\p World-1 grouped by
/// \p Same, in the order of each group's first rank, each group told by
/// \p Describe of its first rank. For errors about ranks that disagree.
std::string whoRunsWhat(size_t World, llvm::function_ref<bool(size_t, size_t)> Same,
                        llvm::function_ref<std::string(size_t)> Describe);

/// The handshake: \p Gather collects every rank's digestWords, rank by
/// rank (over the backend's world), and compareDigests judges them.
llvm::Error exchangeDigests(
    const plan::Plan &P, int64_t Rank,
    llvm::function_ref<llvm::Expected<std::vector<uint32_t>>(llvm::ArrayRef<uint32_t>)> Gather);

} // namespace collc::rt

#endif
