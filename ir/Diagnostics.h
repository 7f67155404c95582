//===- ir/Diagnostics.h - Located diagnostics --------------------*- C++ -*-===//
//
// User errors in a model program are reported as located diagnostics:
//   gpt2.coll:12:7: error: peer 8 is not in 0..7 on rank 7
//         send %x to (rank + 1)
//         ^
// The engine records every diagnostic (so tests and `--verify-diagnostics`
// can inspect them) and optionally renders each to a stream as it arrives.
// Library entry points still return llvm::Error; the error's text is the
// rendered diagnostics, so callers that only look at the Error lose nothing.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_DIAGNOSTICS_H
#define COLLC_IR_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace collc {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity Kind;
  llvm::SMLoc Loc;
  std::string Message;
};

class DiagnosticEngine {
public:
  /// \p SM resolves locations; it may be null for programs built in memory.
  explicit DiagnosticEngine(const llvm::SourceMgr *SM = nullptr) : SM(SM) {}

  void setSourceMgr(const llvm::SourceMgr *NewSM) { SM = NewSM; }
  const llvm::SourceMgr *sourceMgr() const { return SM; }

  /// Render every diagnostic to \p OS as it is reported (null: only record).
  void setStream(llvm::raw_ostream *OS) { Stream = OS; }

  void error(llvm::SMLoc Loc, const llvm::Twine &Msg) { report(Severity::Error, Loc, Msg); }
  void warning(llvm::SMLoc Loc, const llvm::Twine &Msg) { report(Severity::Warning, Loc, Msg); }
  /// A note belongs to the error or warning before it ("rank 3 issues
  /// all_gather here").
  void note(llvm::SMLoc Loc, const llvm::Twine &Msg) { report(Severity::Note, Loc, Msg); }
  void report(Severity S, llvm::SMLoc Loc, const llvm::Twine &Msg);

  unsigned numErrors() const { return NumErrors; }
  bool hasErrors() const { return NumErrors != 0; }
  const std::vector<Diagnostic> &diagnostics() const { return Diags; }
  void clear();

  /// "file:line:col" for \p Loc, or "" when unknown.
  std::string locationString(llvm::SMLoc Loc) const;
  /// Renders one diagnostic in the `file:line:col: error: ...` form with
  /// the source line and a caret.
  void render(llvm::raw_ostream &OS, const Diagnostic &D) const;
  /// Every recorded diagnostic, rendered.
  std::string renderAll() const;

  /// An llvm::Error whose message is every diagnostic rendered, or success
  /// when nothing failed. \p What names the phase ("reading the program", "verify").
  llvm::Error takeError(llvm::StringRef What) const;

  /// Checks the recorded diagnostics against `expected-error {{...}}`
  /// comments in buffer \p BufferID (MLIR's -verify-diagnostics): every
  /// diagnostic must be expected on its line, and every expectation met.
  /// Supports `expected-error@+N`, `@-N` and `@above`/`@below`, and the
  /// severities error, warning and note. \p Part, when given, is the range
  /// of the buffer to read them from (one case of a split file); lines stay
  /// the whole buffer's.
  llvm::Error verifyExpected(unsigned BufferID,
                             std::optional<llvm::StringRef> Part = std::nullopt) const;

private:
  const llvm::SourceMgr *SM;
  llvm::raw_ostream *Stream = nullptr;
  std::vector<Diagnostic> Diags;
  unsigned NumErrors = 0;
};

} // namespace collc

#endif // COLLC_IR_DIAGNOSTICS_H
