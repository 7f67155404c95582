//===- runtime/diagnose/RankList.h - Ranks said in words -*- C++ -*-===//
//
// How a diagnosis names ranks: "rank 2", "ranks 0, 1 and 3"; and a span of
// a group's ranks compactly, "0-3,6" (plan::RankSet's spelling).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_RANKLIST_H
#define COLLC_RUNTIME_DIAGNOSE_RANKLIST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace collc::diag {

/// "rank 2", "ranks 0 and 1", "ranks 0, 1 and 3"; "no rank" for none.
std::string rankList(llvm::ArrayRef<int64_t> Ranks);
/// "0-3,6" (sorted ranks).
std::string rankRange(llvm::ArrayRef<int64_t> Ranks);
/// \p Text with its first letter upper case.
std::string capitalized(llvm::StringRef Text);

} // namespace collc::diag

#endif
