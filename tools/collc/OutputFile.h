//===- tools/collc/OutputFile.h - Outputs written whole or not at all -*- C++ -*-===//
//
// Every file a collc command writes goes to a temporary file beside its
// target and is renamed over it only when the command succeeded: a failed
// command leaves the old file as it was, and an output that names the
// command's own input (`collc compile k.coll -o k.coll`) can never truncate
// or delete it before it was read. `-` is standard output.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_OUTPUTFILE_H
#define COLLC_TOOLS_COLLC_OUTPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>

namespace collc::tool {

class OutputFile {
public:
  /// Opens a temporary file beside \p Path (or stdout for "-"). An error
  /// names the path and why it cannot be written.
  static llvm::Expected<std::unique_ptr<OutputFile>> create(llvm::StringRef Path);
  /// Removes the temporary file unless commit() succeeded.
  ~OutputFile();

  llvm::raw_ostream &os() { return OS ? *OS : llvm::outs(); }
  /// Flushes, checks that every write succeeded (a full disk fails here),
  /// and renames the temporary file over the target.
  llvm::Error commit();

private:
  explicit OutputFile(std::string Path) : Path(std::move(Path)) {}
  std::string Path;
  std::optional<llvm::sys::fs::TempFile> Temp;
  std::unique_ptr<llvm::raw_fd_ostream> OS;
};

} // namespace collc::tool

#endif
