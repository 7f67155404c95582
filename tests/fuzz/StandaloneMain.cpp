//===- tests/fuzz/StandaloneMain.cpp - Replay inputs without libFuzzer ----===//
//
// Builds of collc with GCC have no libFuzzer; this driver runs the fuzz
// target over files and directories (the seed corpus, crash reproducers) so
// the same invariants are checked in every build.
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

static bool runFile(const std::string &Path, unsigned &Count) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buf = llvm::MemoryBuffer::getFile(Path);
  if (!Buf) {
    llvm::errs() << "cannot read " << Path << ": " << Buf.getError().message() << '\n';
    return false;
  }
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>((*Buf)->getBufferStart()),
                         (*Buf)->getBufferSize());
  ++Count;
  return true;
}

int main(int argc, char **argv) {
  unsigned Count = 0;
  bool Ok = true;
  for (int I = 1; I < argc; ++I) {
    std::error_code EC;
    if (!llvm::sys::fs::is_directory(argv[I])) {
      Ok &= runFile(argv[I], Count);
      continue;
    }
    for (llvm::sys::fs::recursive_directory_iterator It(argv[I], EC), End; It != End && !EC;
         It.increment(EC))
      if (llvm::sys::fs::is_regular_file(It->path()))
        Ok &= runFile(It->path(), Count);
  }
  llvm::outs() << "ran " << Count << " inputs\n";
  return Ok && Count > 0 ? 0 : 1;
}
