//===- passes/analysis/LinkFile.h - Calibrated links as JSON -----*- C++ -*-===//
//
// The link file `collc bench --calibrate` writes and every `--link FILE`
// reads: one JSON object (docs/passes.md, "Link files"):
//
//   { "collc_link": 1, "name": "...", "description": "...",
//     "backend": "local", "world": 2,
//     "alpha_us": 4.1, "bus_gbps": 3.2,
//     "ops": { "all_reduce": [ { "min_bytes": 0, "max_bytes": 65536,
//                                "alpha_us": 3.9, "bus_gbps": 1.7,
//                                "points": 7, "median_rel_error": 0.04 }, ... ],
//              ... } }
//
// Bytes are reported bytes (CostModel.h's reportedBytes); ranges of one op
// kind ascend and do not overlap. The top-level alpha and bandwidth cost the
// kinds the file does not list. The file is input: the reader checks every
// field and names it ("ops.all_reduce[1].bus_gbps: expected > 0").
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_LINKFILE_H
#define COLLC_PASSES_ANALYSIS_LINKFILE_H

#include "passes/analysis/CostModel.h"

#include "llvm/Support/raw_ostream.h"

namespace collc {

/// The format version this reader accepts and the writer writes.
constexpr int64_t LinkFileVersion = 1;

/// What every `--link`, `auto:<link>` and API link argument goes through: a
/// built-in class by name (findLinkClass), or a link file (a path: it
/// contains '/' or ends in .json) read with readLinkFile.
llvm::Expected<LinkClass> resolveLink(llvm::StringRef NameOrFile);

/// Reads the link file at \p Path; errors name the file and the field.
llvm::Expected<LinkClass> readLinkFile(llvm::StringRef Path);
/// Parses link file text; \p Name names it in errors.
llvm::Expected<LinkClass> parseLinkFile(llvm::StringRef Text, llvm::StringRef Name);

/// Writes \p Fit (with its overall \p Overall alpha and bandwidth) as a link
/// file that parseLinkFile reads back.
void writeLinkFile(const LinkFit &Fit, AlphaBeta Overall, llvm::raw_ostream &OS);

} // namespace collc

#endif
