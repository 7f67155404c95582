//===- plan/OutputFile.cpp - Outputs written whole or not at all ----===//

#include "plan/OutputFile.h"

#include "plan/SignalHandlerThread.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <fcntl.h>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace collc {

/// The longest name (one path component) Linux's file systems take.
static constexpr size_t MaxNameBytes = 255;

static Error cannotWrite(StringRef Path, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "cannot write '%s': %s", Path.str().c_str(),
                           Why.str().c_str());
}

bool OutputFile::writtenInPlace(StringRef Path) {
  sys::fs::file_status Link, Target;
  bool IsLink = !sys::fs::status(Path, Link, /*Follow=*/false) &&
                Link.type() == sys::fs::file_type::symlink_file;
  bool Exists = !sys::fs::status(Path, Target);
  return IsLink || (Exists && Target.type() != sys::fs::file_type::regular_file &&
                    Target.type() != sys::fs::file_type::directory_file);
}

/// Opens FIFO \p Path for writing once a process opens it for reading,
/// waiting \p Wait at most (opening it blocking would wait forever).
static Expected<int> openFifo(StringRef Path, std::chrono::milliseconds Wait) {
  auto Deadline = std::chrono::steady_clock::now() + Wait;
  std::string Name = Path.str();
  for (;;) {
    int FD = ::open(Name.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (FD >= 0) {
      // Writes wait for the reader as usual from here on.
      int Flags = fcntl(FD, F_GETFL);
      if (Flags < 0 || fcntl(FD, F_SETFL, Flags & ~O_NONBLOCK) < 0) {
        std::error_code EC(errno, std::generic_category());
        ::close(FD);
        return cannotWrite(Path, EC.message());
      }
      return FD;
    }
    if (errno == EINTR)
      continue;
    if (errno != ENXIO) // ENXIO: nobody reads it yet
      return cannotWrite(Path, std::error_code(errno, std::generic_category()).message());
    if (std::chrono::steady_clock::now() >= Deadline)
      return cannotWrite(Path, formatv("it is a FIFO that no process opened for reading within "
                                       "{0} ms (start its reader first)",
                                       Wait.count()));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Expected<std::unique_ptr<OutputFile>> OutputFile::create(StringRef Path, ArrayRef<StringRef> Inputs,
                                                         bool DashIsStandardOutput,
                                                         std::chrono::milliseconds FifoReaderWait) {
  std::unique_ptr<OutputFile> F(new OutputFile(Path.str()));
  if (Path == "-" && DashIsStandardOutput)
    return F;
  for (StringRef In : Inputs) {
    bool Same = false;
    if (In != "-" && !sys::fs::equivalent(Path, In, Same) && Same)
      return cannotWrite(Path, formatv("it is the command's input '{0}' (the output would "
                                       "replace it): write the output to another file",
                                       In));
  }
  sys::fs::file_status Target;
  if (!sys::fs::status(Path, Target) && Target.type() == sys::fs::file_type::directory_file)
    return cannotWrite(Path, "it is a directory");
  if (writtenInPlace(Path)) {
    // Written in place, as a shell's `>` would: a device, a pipe or a
    // socket has nothing to keep whole (and a rename would put a file where
    // /dev/null was); a link is opened by the kernel, which follows it with
    // its protections (a link planted in /tmp by another user is refused)
    // and its loop limit, where renaming over the file it names would not.
    if (!sys::fs::status(Path, Target) && Target.type() == sys::fs::file_type::fifo_file) {
      Expected<int> FD = openFifo(Path, FifoReaderWait);
      if (!FD)
        return FD.takeError();
      F->OS = std::make_unique<raw_fd_ostream>(*FD, /*shouldClose=*/true);
      return F;
    }
    std::error_code EC;
    F->OS = std::make_unique<raw_fd_ostream>(Path, EC, sys::fs::OF_None);
    if (EC)
      return cannotWrite(Path, EC.message());
    return F;
  }
  // Beside the target, so that the rename stays within one file system;
  // named after it unless that would pass the file system's limit on a
  // name (255 bytes) where the target's own name does not.
  std::string Model = (Path + ".tmp-%%%%%%%%").str();
  if (sys::path::filename(Model).size() > MaxNameBytes) {
    SmallString<256> Short(sys::path::parent_path(Path));
    sys::path::append(Short, ".collc-tmp-%%%%%%%%");
    Model = std::string(Short);
  }
  installSignalHandlersFromALastingThread(); // TempFile's removal on a signal
  Expected<sys::fs::TempFile> T = sys::fs::TempFile::create(Model);
  if (!T)
    return cannotWrite(Path, toString(T.takeError()));
  F->Temp.emplace(std::move(*T));
  F->OS = std::make_unique<raw_fd_ostream>(F->Temp->FD, /*shouldClose=*/false);
  return F;
}

OutputFile::~OutputFile() {
  if (OS) {
    // Not committed (a failed command): what is buffered goes out, and an
    // error writing it is dropped here rather than aborting the process.
    OS->flush();
    OS->clear_error();
  }
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
  Error E = Temp->keep(Path);
  Temp.reset();
  if (E)
    return cannotWrite(Path, toString(std::move(E)));
  return Error::success();
}

} // namespace collc
