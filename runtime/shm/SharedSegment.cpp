//===- runtime/shm/SharedSegment.cpp - Memory the processes of a host share ===//

#include "runtime/shm/SharedSegment.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::shm {

namespace {

constexpr int RequiredSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

Error sysError(StringRef Purpose, StringRef What, int Errno) {
  return makeError(ErrorKind::Backend,
                   formatv("{0}: {1} failed: {2}", Purpose, What, strerror(Errno)));
}

} // namespace

SharedSegment &SharedSegment::operator=(SharedSegment &&O) noexcept {
  if (this != &O) {
    this->~SharedSegment();
    Base = O.Base;
    Bytes = O.Bytes;
    Fd = O.Fd;
    O.Base = nullptr;
    O.Bytes = 0;
    O.Fd = -1;
  }
  return *this;
}

SharedSegment::~SharedSegment() {
  if (Base)
    munmap(Base, Bytes);
  closeDescriptor();
  Base = nullptr;
  Bytes = 0;
}

Error SharedSegment::map(uint64_t Size, StringRef Purpose) {
  void *P = mmap(nullptr, Size, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  if (P == MAP_FAILED)
    return sysError(Purpose, formatv("mapping {0} bytes", Size).str(), errno);
  // Transparent huge pages where the kernel's shmem policy grants them.
  madvise(P, Size, MADV_HUGEPAGE);
  Base = static_cast<char *>(P);
  Bytes = Size;
  return Error::success();
}

void SharedSegment::closeDescriptor() {
  if (Fd >= 0)
    close(Fd);
  Fd = -1;
}

Expected<SharedSegment> SharedSegment::create(uint64_t Bytes, StringRef Purpose) {
  if (Bytes == 0 || Bytes > uint64_t(INT64_MAX))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: a segment of {1} bytes (expected 1 to 2^63 - 1)", Purpose, Bytes));
  std::string Name = ("collc " + Purpose).str().substr(0, 240);
  int Fd = memfd_create(Name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (Fd < 0)
    return sysError(Purpose, "memfd_create", errno);
  SharedSegment S;
  S.Fd = Fd;
  if (fchmod(Fd, 0600) != 0)
    return sysError(Purpose, "fchmod 0600", errno);
  if (ftruncate(Fd, off_t(Bytes)) != 0)
    return sysError(Purpose, formatv("sizing it to {0} bytes", Bytes).str(), errno);
  if (fcntl(Fd, F_ADD_SEALS, RequiredSeals) != 0)
    return sysError(Purpose, "sealing its size", errno);
  if (Error E = S.map(Bytes, Purpose))
    return E;
  return S;
}

Expected<SharedSegment> SharedSegment::adopt(int Fd, uint64_t Bytes, StringRef Purpose) {
  SharedSegment S;
  S.Fd = Fd; // closed with S on every path
  struct stat St;
  if (fstat(Fd, &St) != 0)
    return sysError(Purpose, "fstat of the received segment", errno);
  auto Refuse = [&](const Twine &Why) {
    return makeError(ErrorKind::Backend,
                     formatv("{0}: the received segment is refused: {1}", Purpose, Why.str()));
  };
  if (!S_ISREG(St.st_mode))
    return Refuse("it is not a memory file");
  if (St.st_uid != geteuid())
    return Refuse(formatv("it belongs to user {0}, not {1}", St.st_uid, geteuid()).str());
  if ((St.st_mode & 077) != 0)
    return Refuse(formatv("its mode is {0:o}, not owner-only", St.st_mode & 0777).str());
  if (uint64_t(St.st_size) != Bytes)
    return Refuse(formatv("it holds {0} bytes, not the {1} agreed", St.st_size, Bytes).str());
  int Seals = fcntl(Fd, F_GET_SEALS);
  if (Seals < 0 || (Seals & RequiredSeals) != RequiredSeals)
    return Refuse("its size is not sealed");
  if (Error E = S.map(Bytes, Purpose))
    return E;
  return S;
}

} // namespace collc::rt::shm
