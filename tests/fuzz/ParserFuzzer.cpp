//===- tests/fuzz/ParserFuzzer.cpp - libFuzzer target for the parser ------===//
//
// Feeds arbitrary bytes to the parser. Invariants checked on every input:
//  - no crash, hang or sanitizer report in the lexer, parser or verifier;
//  - a program that parses prints to text that parses again and prints
//    identically (the round trip);
//  - a failed parse always comes with at least one located diagnostic.
// Long run: see docs/testing.md.
//
//===----------------------------------------------------------------------===//

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdio>
#include <cstdlib>

using namespace collc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  llvm::SourceMgr SM;
  unsigned Id =
      SM.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(Text, "fuzz.coll"), llvm::SMLoc());
  DiagnosticEngine Diags(&SM);
  llvm::Expected<std::unique_ptr<Program>> P = parseProgram(SM, Id, Diags);
  if (!P) {
    llvm::consumeError(P.takeError());
    if (Diags.diagnostics().empty()) {
      fprintf(stderr, "parse failed without a diagnostic\n");
      abort();
    }
    return 0;
  }
  llvm::consumeError(verifyProgram(**P, Diags));
  std::string First = printProgram(**P);
  llvm::Expected<ParsedProgram> Again = parseProgramText(First, "printed.coll");
  if (!Again) {
    fprintf(stderr, "printed IR does not parse:\n%s\n--- printed:\n%s\n",
            llvm::toString(Again.takeError()).c_str(), First.c_str());
    abort();
  }
  std::string Second = printProgram(*Again->Prog);
  if (First != Second) {
    fprintf(stderr, "round trip differs:\n--- first:\n%s\n--- second:\n%s\n", First.c_str(),
            Second.c_str());
    abort();
  }
  return 0;
}
