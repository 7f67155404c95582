//===- tools/collc/bench/HostLoad.cpp - How busy the host was -------------===//

#include "tools/collc/bench/HostLoad.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <ctime>

using namespace llvm;

namespace collc::tool {

std::optional<double> runQueueDelayUs() {
  std::error_code EC;
  double TotalNs = 0;
  bool Any = false;
  for (sys::fs::directory_iterator I("/proc/self/task", EC), End; !EC && I != End;
       I.increment(EC)) {
    SmallString<64> Path(I->path());
    sys::path::append(Path, "schedstat");
    // Proc files report size 0: read as a stream.
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buf =
        MemoryBuffer::getFileAsStream(Path);
    if (!Buf)
      continue; // the thread ended meanwhile
    // "<on-cpu ns> <run delay ns> <timeslices>"
    SmallVector<StringRef, 3> Fields;
    StringRef((*Buf)->getBuffer()).trim().split(Fields, ' ');
    uint64_t DelayNs = 0;
    if (Fields.size() < 2 || Fields[1].getAsInteger(10, DelayNs))
      continue;
    TotalNs += double(DelayNs);
    Any = true;
  }
  if (!Any)
    return std::nullopt;
  return TotalNs / 1e3;
}

std::optional<double> processCpuUs() {
  timespec T;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &T) != 0)
    return std::nullopt;
  return double(T.tv_sec) * 1e6 + double(T.tv_nsec) / 1e3;
}

std::optional<std::string> loadAverages() {
  double L[3];
  if (getloadavg(L, 3) != 3)
    return std::nullopt;
  return formatv("{0:f2} {1:f2} {2:f2}", L[0], L[1], L[2]).str();
}

} // namespace collc::tool
