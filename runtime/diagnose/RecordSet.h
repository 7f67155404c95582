//===- runtime/diagnose/RecordSet.h - The dumps of one run -*- C++ -*-===//
//
// Whatever dumps a run left: each text is read as a collc flight record or
// a PyTorch Flight Recorder dump (told apart by their fields), and placed
// at its rank. A dump that cannot be read is a finding of the set, with
// its located error, and its rank counts as missing: a diagnosis goes on
// with what is left. Only a set that cannot be one run is an error: no
// dump readable at all, dumps of both kinds, dumps of different worlds.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_RECORDSET_H
#define COLLC_RUNTIME_DIAGNOSE_RECORDSET_H

#include "runtime/diagnose/RankRecord.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace collc::diag {

/// A dump's name (its path) and its text.
struct NamedText {
  std::string Name;
  std::string Text;
};

struct RecordSet {
  RecordFormat Format = RecordFormat::Collc;
  int64_t World = 0;
  /// By world rank; nullopt where no readable dump came.
  std::vector<std::optional<RankRecord>> Ranks;
  /// Dumps that could not be read, and why; two dumps of one rank.
  std::vector<std::string> Problems;

  const RankRecord *at(int64_t Rank) const {
    return Rank >= 0 && size_t(Rank) < Ranks.size() && Ranks[Rank] ? &*Ranks[Rank] : nullptr;
  }
};

llvm::Expected<RecordSet> readRecords(llvm::ArrayRef<NamedText> Texts);

/// The regular files of directory \p Dir, sorted by name, each at most
/// MaxDumpBytes; an error names the directory or the file that cannot be
/// read.
llvm::Expected<std::vector<NamedText>> readDumpDirectory(llvm::StringRef Dir);

} // namespace collc::diag

#endif
