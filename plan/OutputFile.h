//===- plan/OutputFile.h - Outputs written whole or not at all -*- C++ -*-===//
//
// Every file a collc command (and collcPlanSave) writes goes to a temporary
// file beside its target and is renamed over it only when the command
// succeeded: a failed command leaves the old file as it was. A device, a
// pipe or a socket (`-o /dev/null`, `/dev/stdout`) and a link are written in
// place, as a shell's `>` would: never replaced by a file, and a link
// followed by the kernel, with its protections. A FIFO waits for its reader
// as a shell's `>` would, but not forever: an error after ReaderWait (60 s)
// names it. An output that is one of
// the command's inputs (`collc compile k.coll -o k.coll`) is refused: it
// would replace what the user wrote. `-` is standard output (for the tool).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PLAN_OUTPUTFILE_H
#define COLLC_PLAN_OUTPUTFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace collc {

class OutputFile {
public:
  /// Opens a temporary file beside \p Path (or stdout for "-" where
  /// \p DashIsStandardOutput; \p Path itself where it is a link or not a
  /// regular file). \p Inputs: the files the command reads, which \p Path
  /// must not be. An error names the path and why it cannot be written.
  /// How long a FIFO waits for a process to open it for reading.
  static constexpr std::chrono::milliseconds ReaderWait{60000};
  static llvm::Expected<std::unique_ptr<OutputFile>>
  create(llvm::StringRef Path, llvm::ArrayRef<llvm::StringRef> Inputs = {},
         bool DashIsStandardOutput = true, std::chrono::milliseconds FifoReaderWait = ReaderWait);
  /// Whether \p Path is written in place (a link, a device, a pipe, a
  /// socket): opening it truncates it, or waits for a reader.
  static bool writtenInPlace(llvm::StringRef Path);
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

} // namespace collc

#endif
