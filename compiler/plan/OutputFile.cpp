//===- compiler/plan/OutputFile.cpp - Outputs written whole or not at all ----===//

#include "compiler/plan/OutputFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <climits>
#include <unistd.h>

using namespace llvm;

namespace collc {

/// The file that \p Path names through any links, whether it exists yet or
/// not (a dangling link's target is created, the link kept).
static std::string followLinks(StringRef Path) {
  std::string P = Path.str();
  for (int Hops = 0; Hops != 40; ++Hops) { // as the kernel's limit on a lookup
    sys::fs::file_status Status;
    if (sys::fs::status(P, Status, /*Follow=*/false) ||
        Status.type() != sys::fs::file_type::symlink_file)
      return P;
    char To[PATH_MAX];
    ssize_t N = ::readlink(P.c_str(), To, sizeof(To));
    if (N <= 0 || size_t(N) == sizeof(To))
      return P;
    SmallString<256> Next(StringRef(To, size_t(N)));
    if (sys::path::is_relative(Next)) {
      SmallString<256> Dir(sys::path::parent_path(P));
      sys::path::append(Dir, Next);
      Next = Dir;
    }
    P = Next.str().str();
  }
  return P;
}

static Error cannotWrite(StringRef Path, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "cannot write '%s': %s", Path.str().c_str(),
                           Why.str().c_str());
}

Expected<std::unique_ptr<OutputFile>> OutputFile::create(StringRef Path,
                                                         ArrayRef<StringRef> Inputs) {
  std::unique_ptr<OutputFile> F(new OutputFile(Path.str()));
  if (Path == "-")
    return F;
  for (StringRef In : Inputs) {
    bool Same = false;
    if (In != "-" && !sys::fs::equivalent(Path, In, Same) && Same)
      return cannotWrite(Path, formatv("it is the command's input '{0}' (the output would "
                                       "replace it): write the output to another file",
                                       In));
  }
  // Through links: the file they name is replaced, the links stay.
  F->Target = followLinks(Path);
  sys::fs::file_status Status;
  if (!sys::fs::status(F->Target, Status)) {
    sys::fs::file_type Type = Status.type();
    if (Type == sys::fs::file_type::directory_file)
      return cannotWrite(Path, "it is a directory");
    if (Type != sys::fs::file_type::regular_file) {
      // A device, a pipe, a socket: nothing to keep whole, and a rename
      // would put a file where /dev/null was.
      std::error_code EC;
      F->OS = std::make_unique<raw_fd_ostream>(F->Target, EC, sys::fs::OF_None);
      if (EC)
        return cannotWrite(Path, EC.message());
      return F;
    }
  }
  // Beside the target, so that the rename stays within one file system.
  Expected<sys::fs::TempFile> T = sys::fs::TempFile::create(F->Target + ".tmp-%%%%%%%%");
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
    if (outs().has_error()) {
      std::error_code EC = outs().error();
      // Reported here, once: left set, it would abort the process at exit.
      outs().clear_error();
      return cannotWrite("-", EC.message());
    }
    return Error::success();
  }
  OS->flush();
  std::error_code EC = OS->error();
  OS->clear_error();
  OS.reset();
  if (EC)
    return cannotWrite(Path, EC.message());
  if (!Temp) // written in place
    return Error::success();
  Error E = Temp->keep(Target);
  Temp.reset();
  if (E)
    return cannotWrite(Path, toString(std::move(E)));
  return Error::success();
}

} // namespace collc
