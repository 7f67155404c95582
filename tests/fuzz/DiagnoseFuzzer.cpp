//===- tests/fuzz/DiagnoseFuzzer.cpp - libFuzzer target for flight record dumps =//
//
// Dumps are untrusted input (`collc diagnose` reads whatever a run left):
// feeds arbitrary bytes, cut into dumps at each "\n--dump--\n" line (seeded
// with the dumps of seeded faults, collc's and PyTorch's), through the
// readers and the diagnosis. Invariants checked on every input:
//  - no crash, hang or sanitizer report in the readers, the rules or the
//    text and JSON reports;
//  - every rank the diagnosis names (culprit, candidate) is a rank of the
//    world the dumps describe.
// Long run: see docs/testing.md.
//
//===----------------------------------------------------------------------===//

#include "runtime/diagnose/Diagnosis.h"
#include "runtime/diagnose/DiagnosisReport.h"
#include "runtime/diagnose/RecordSet.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

using namespace collc;

/// A world's worth of dumps at most: each is read whole.
constexpr size_t MaxDumps = 16;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Rest(reinterpret_cast<const char *>(Data), Size);
  std::vector<diag::NamedText> Texts;
  while (!Rest.empty() && Texts.size() < MaxDumps) {
    auto [Dump, After] = Rest.split("\n--dump--\n");
    Texts.push_back({"dump" + std::to_string(Texts.size()), Dump.str()});
    Rest = After;
  }
  llvm::Expected<diag::RecordSet> Set = diag::readRecords(Texts);
  if (!Set) {
    llvm::consumeError(Set.takeError());
    return 0;
  }
  diag::Diagnosis D = diag::diagnose(*Set);
  for (const std::vector<int64_t> *Ranks : {&D.Culprits, &D.Candidates})
    for (int64_t R : *Ranks)
      if (R < 0 || R >= Set->World) {
        std::fprintf(stderr, "diagnosis names rank %lld of a world of %lld\n", (long long)R,
                     (long long)Set->World);
        std::abort();
      }
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  diag::printDiagnosisText(D, OS);
  diag::printDiagnosisJson(D, OS);
  return 0;
}
