//===- runtime/nccl/UniqueIdExchange.cpp - Sharing NCCL unique ids --------===//

#include "runtime/nccl/UniqueIdExchange.h"

#include "runtime/nccl/CudaError.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>
#include <thread>

using namespace llvm;

namespace collc::rt::nccl {

UniqueIdExchange::~UniqueIdExchange() = default;

namespace {

class InProcessIds : public UniqueIdExchange {
public:
  Expected<ncclUniqueId> idFor(StringRef Key, bool, int64_t Members) override {
    std::lock_guard<std::mutex> Lock(M);
    auto It = Ids.find(Key);
    if (It == Ids.end()) {
      Entry New;
      if (Error E = checkNccl(ncclGetUniqueId(&New.Id), "ncclGetUniqueId for '" + Key + "'"))
        return E;
      It = Ids.insert({Key, New}).first;
    }
    ncclUniqueId Id = It->second.Id;
    if (Members > 0 && ++It->second.Taken == Members)
      Ids.erase(It);
    return Id;
  }

private:
  struct Entry {
    ncclUniqueId Id;
    int64_t Taken = 0;
  };
  std::mutex M;
  StringMap<Entry> Ids;
};

class FileIds : public UniqueIdExchange {
public:
  FileIds(std::string Dir, std::chrono::milliseconds Timeout)
      : Dir(std::move(Dir)), Timeout(Timeout) {}

  Expected<ncclUniqueId> idFor(StringRef Key, bool Mints, int64_t) override {
    SmallString<128> Path(Dir);
    sys::path::append(Path, fileName(Key));
    if (Mints)
      return mint(Key, Path);
    auto Deadline = std::chrono::steady_clock::now() + Timeout;
    while (true) {
      if (auto Buf = MemoryBuffer::getFile(Path)) {
        StringRef Bytes = (*Buf)->getBuffer();
        if (Bytes.size() != sizeof(ncclUniqueId))
          return makeError(ErrorKind::InvalidArgument,
                           formatv("{0} holds {1} bytes; an NCCL unique id has {2}", Path,
                                   Bytes.size(), sizeof(ncclUniqueId)));
        ncclUniqueId Id;
        memcpy(&Id, Bytes.data(), sizeof(Id));
        return Id;
      }
      if (std::chrono::steady_clock::now() > Deadline)
        return makeError(ErrorKind::Timeout,
                         formatv("no NCCL unique id for '{0}' appeared at {1} within {2} ms (is "
                                 "its rank 0 running, with the same directory?)",
                                 Key, Path, Timeout.count()));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

private:
  /// Keys hold '@' and '/': kept readable, made safe.
  static std::string fileName(StringRef Key) {
    std::string Name;
    for (char C : Key)
      Name += isAlnum(C) || C == '.' || C == '-' || C == '_' ? C : '_';
    return Name + ".id";
  }

  Expected<ncclUniqueId> mint(StringRef Key, StringRef Path) {
    ncclUniqueId Id;
    if (Error E = checkNccl(ncclGetUniqueId(&Id), "ncclGetUniqueId for '" + Key + "'"))
      return E;
    std::string Tmp = (Path + ".tmp." + Twine(sys::Process::getProcessId())).str();
    {
      std::error_code EC;
      raw_fd_ostream OS(Tmp, EC);
      if (EC)
        return makeError(ErrorKind::InvalidArgument,
                         formatv("cannot write {0}: {1}", Tmp, EC.message()));
      OS.write(reinterpret_cast<const char *>(&Id), sizeof(Id));
    }
    if (std::error_code EC = sys::fs::rename(Tmp, Path))
      return makeError(ErrorKind::InvalidArgument,
                       formatv("cannot rename {0} to {1}: {2}", Tmp, Path, EC.message()));
    return Id;
  }

  std::string Dir;
  std::chrono::milliseconds Timeout;
};

class TableIds : public UniqueIdExchange {
public:
  explicit TableIds(StringMap<ncclUniqueId> Ids) : Ids(std::move(Ids)) {}

  Expected<ncclUniqueId> idFor(StringRef Key, bool, int64_t) override {
    std::lock_guard<std::mutex> Lock(M);
    auto It = Ids.find(Key);
    if (It == Ids.end())
      return makeError(ErrorKind::InvalidArgument,
                       formatv("no NCCL unique id for '{0}' in the gathered table ({1}: an id "
                               "serves one communicator)",
                               Key, Served.count(Key) ? "it was served already"
                                                      : "no rank minted it"));
    ncclUniqueId Id = It->second;
    Ids.erase(It);
    Served.insert(Key);
    return Id;
  }

private:
  std::mutex M;
  StringMap<ncclUniqueId> Ids;
  StringSet<> Served;
};

} // namespace

std::string commKey(StringRef Prefix, StringRef Key) { return (Prefix + "/" + Key).str(); }

std::unique_ptr<UniqueIdExchange> createTableIdExchange(StringMap<ncclUniqueId> Ids) {
  return std::make_unique<TableIds>(std::move(Ids));
}

UniqueIdExchange &inProcessIds() {
  static InProcessIds Table;
  return Table;
}

std::unique_ptr<UniqueIdExchange> createFileIdExchange(std::string Dir,
                                                       std::chrono::milliseconds Timeout) {
  return std::make_unique<FileIds>(std::move(Dir), Timeout);
}

} // namespace collc::rt::nccl
