//===- tests/tools/PlanReseal.cpp - Reseal an edited plan, as an attacker would -===//
//
// collc-plan-reseal FILE: prints FILE with its digest line replaced by the
// digest of the text above it. The digest is a checksum, not a seal; the
// tests use this to show that the validator, not the digest, stands between
// an edited plan and the runtime.
//
//===----------------------------------------------------------------------===//

#include "plan/Plan.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

int main(int Argc, char **Argv) {
  if (Argc != 2) {
    llvm::errs() << "usage: collc-plan-reseal FILE\n";
    return 2;
  }
  auto Buf = llvm::MemoryBuffer::getFileOrSTDIN(Argv[1]);
  if (!Buf) {
    llvm::errs() << "cannot read " << Argv[1] << "\n";
    return 1;
  }
  llvm::StringRef Text = (*Buf)->getBuffer();
  size_t At = Text.startswith("digest ") ? 0 : Text.find("\ndigest ");
  if (At == llvm::StringRef::npos) {
    llvm::errs() << Argv[1] << " has no digest line\n";
    return 1;
  }
  if (At)
    ++At;
  llvm::StringRef Above = Text.take_front(At);
  llvm::StringRef After = Text.drop_front(At).split('\n').second;
  llvm::outs() << Above << "digest " << collc::plan::digestOfText(Above) << "\n" << After;
  return 0;
}
