//===- ir/Parser.h - Text IR to Program --------------------------*- C++ -*-===//
//
// Grammar and examples: docs/ir.md. The parser reports every error it can
// recover from (it resynchronises at the next line), each located in the
// source, and returns a program only when there were none.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_PARSER_H
#define COLLC_IR_PARSER_H

#include "ir/Diagnostics.h"
#include "ir/Program.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>

namespace collc {

struct ParseOptions {
  /// Compile for this world size instead of the one the program declares
  /// (0: as declared). Expressions over `world` follow it.
  int64_t WorldSize = 0;
};

/// Parses the program in buffer \p BufferID of \p SM, or in the range
/// \p Part of it (one case of a split file: its locations keep the whole
/// file's lines). Diagnostics go to \p Diags; on failure the returned error
/// carries them rendered. The program's locations point into \p SM, which
/// must outlive it.
llvm::Expected<std::unique_ptr<Program>>
parseProgram(const llvm::SourceMgr &SM, unsigned BufferID, DiagnosticEngine &Diags,
             const ParseOptions &Opts = {}, std::optional<llvm::StringRef> Part = std::nullopt);

/// A program parsed from text together with the source it points into.
struct ParsedProgram {
  std::unique_ptr<llvm::SourceMgr> Source;
  std::unique_ptr<Program> Prog;
};

/// Parses \p Text (named \p BufferName in diagnostics). Convenient for
/// tests and tools that hold the text in memory.
llvm::Expected<ParsedProgram> parseProgramText(llvm::StringRef Text,
                                               llvm::StringRef BufferName = "<string>",
                                               const ParseOptions &Opts = {});

/// Parses the file at \p Path.
llvm::Expected<ParsedProgram> parseProgramFile(llvm::StringRef Path, const ParseOptions &Opts = {});

} // namespace collc

#endif // COLLC_IR_PARSER_H
