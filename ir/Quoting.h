//===- ir/Quoting.h - Quoted strings of the IR and plan text ----*- C++ -*-===//
//
// The one spelling of a quoted string in collc's own text formats, the IR
// (attribute strings) and the plan file (source, note, why):
//
//   "..."   with the escapes \"  \\  \n  \t  \r  \xHH (two hex digits)
//
// The writer escapes '"', '\' and every control byte (below 0x20, and
// 0x7f): \n, \t and \r by name, the others as \xHH. Bytes from 0x80 up pass
// through, so UTF-8 stays readable. A quoted string therefore never spans a
// line, and every byte string round-trips through writeQuoted + unquote.
//
// JSON (llvm::json, compiler/dump/JSONWriter) and DOT labels
// (compiler/dump/DumpDot.cpp) follow their own formats' escaping rules
// and stay separate on purpose.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_QUOTING_H
#define COLLC_IR_QUOTING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace collc {

/// Writes \p S between double quotes, escaped as above.
void writeQuoted(llvm::raw_ostream &OS, llvm::StringRef S);
std::string quoteString(llvm::StringRef S);

/// \p S made safe to print in a diagnostic: control bytes (but tab, and
/// newline when \p KeepNewlines), 0x7f and bytes that are not part of
/// well-formed UTF-8 become \xHH; everything else is kept, so names and
/// valid UTF-8 stay readable. Hostile input must not put raw NULs or broken
/// UTF-8 on a user's terminal or in a log.
std::string escapeForMessage(llvm::StringRef S, bool KeepNewlines = true);

/// In \p Rest, the text just after an opening quote: the index of the
/// closing quote, or StringRef::npos when a newline or the end of \p Rest
/// comes first (an unterminated string). An escaped byte never closes.
size_t findClosingQuote(llvm::StringRef Rest);

/// Why a quoted string's body does not decode: the message names the bad
/// escape; Offset is where its backslash sits in the body, so the caller can
/// turn it into a line and column.
class UnquoteError : public llvm::ErrorInfo<UnquoteError> {
public:
  static char ID;
  UnquoteError(size_t Offset, std::string Msg) : Offset(Offset), Msg(std::move(Msg)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Msg; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  size_t Offset;
  std::string Msg;
};

/// Decodes \p Body, the text between the quotes. Fails with an UnquoteError.
llvm::Expected<std::string> unquote(llvm::StringRef Body);

} // namespace collc

#endif // COLLC_IR_QUOTING_H
