//===- tests/unit/TestUtil.h - Helpers for the unit tests -------*- C++ -*-===//
#ifndef COLLC_TESTS_UNIT_TESTUTIL_H
#define COLLC_TESTS_UNIT_TESTUTIL_H

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include "gtest/gtest.h"

#include <string>

namespace collc::test {

/// Parses \p Text, failing the test (with the diagnostics) if it does not.
inline ParsedProgram parseOK(llvm::StringRef Text) {
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, "test.coll");
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  return std::move(*P);
}

/// The rendered diagnostics of parsing and then verifying \p Text ("" when
/// both succeed).
inline std::string diagnose(llvm::StringRef Text) {
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, "test.coll");
  if (!P)
    return llvm::toString(P.takeError());
  DiagnosticEngine Diags(P->Source.get());
  if (llvm::Error E = verifyProgram(*P->Prog, Diags))
    return llvm::toString(std::move(E));
  return "";
}

} // namespace collc::test

#endif
