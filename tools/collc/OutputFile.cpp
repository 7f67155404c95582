//===- tools/collc/OutputFile.cpp - Outputs written whole or not at all ----===//

#include "tools/collc/OutputFile.h"

#include "llvm/Support/Path.h"

using namespace llvm;

namespace collc::tool {

static Error cannotWrite(StringRef Path, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "cannot write '%s': %s", Path.str().c_str(),
                           Why.str().c_str());
}

Expected<std::unique_ptr<OutputFile>> OutputFile::create(StringRef Path) {
  std::unique_ptr<OutputFile> F(new OutputFile(Path.str()));
  if (Path == "-")
    return F;
  // Beside the target, so that the rename stays within one file system.
  Expected<sys::fs::TempFile> T = sys::fs::TempFile::create(Path + ".tmp-%%%%%%%%");
  if (!T)
    return cannotWrite(Path, toString(T.takeError()));
  F->Temp.emplace(std::move(*T));
  F->OS = std::make_unique<raw_fd_ostream>(F->Temp->FD, /*shouldClose=*/false);
  return F;
}

OutputFile::~OutputFile() {
  OS.reset();
  if (Temp)
    consumeError(Temp->discard());
}

Error OutputFile::commit() {
  if (!OS) {
    outs().flush();
    if (outs().has_error())
      return cannotWrite("-", outs().error().message());
    return Error::success();
  }
  OS->flush();
  std::error_code EC = OS->error();
  OS->clear_error();
  OS.reset();
  if (EC)
    return cannotWrite(Path, EC.message());
  Error E = Temp->keep(Path);
  Temp.reset();
  if (E)
    return cannotWrite(Path, toString(std::move(E)));
  return Error::success();
}

} // namespace collc::tool
