//===- ir/InputFile.cpp - Reading an input file, bounded -----------------===//

#include "ir/InputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <string>
#include <vector>

using namespace llvm;

namespace collc {

static Error cannotRead(StringRef Path, StringRef What, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), "cannot read %s%s'%s': %s", What.str().c_str(),
                           What.empty() ? "" : " ", Path.str().c_str(), Why.str().c_str());
}

Expected<std::unique_ptr<MemoryBuffer>> readInputFile(StringRef Path, StringRef What,
                                                      uint64_t Limit) {
  auto TooLarge = [&] {
    return cannotRead(Path, What,
                      formatv("it holds more than {0} bytes, the most collc reads (an endless "
                              "device or pipe?)",
                              Limit));
  };
  // A regular file says its size: refused before anything is read.
  sys::fs::file_status Status;
  if (Path != "-" && !sys::fs::status(Path, Status) &&
      Status.type() == sys::fs::file_type::regular_file) {
    if (Status.getSize() > Limit)
      return TooLarge();
    ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(Path);
    if (!Buf)
      return cannotRead(Path, What, Buf.getError().message());
    return std::move(*Buf);
  }
  // Standard input, a device, a pipe: read up to the limit, in chunks (a
  // growing string would hold twice the limit before it could refuse; the
  // chunks hold it once, and the final copy twice for a moment).
  int FD = 0;
  if (Path != "-")
    if (std::error_code EC = sys::fs::openFileForRead(Path, FD))
      return cannotRead(Path, What, EC.message());
  constexpr size_t ChunkBytes = 16 << 20;
  std::vector<std::unique_ptr<char[]>> Chunks;
  uint64_t Total = 0;
  size_t InLast = ChunkBytes; // bytes in the last chunk
  Error Failed = Error::success();
  while (true) {
    if (InLast == ChunkBytes) {
      Chunks.push_back(std::unique_ptr<char[]>(new char[ChunkBytes])); // not zeroed
      InLast = 0;
    }
    Expected<size_t> Got = sys::fs::readNativeFile(
        sys::fs::convertFDToNativeFile(FD),
        MutableArrayRef<char>(Chunks.back().get() + InLast, ChunkBytes - InLast));
    if (!Got) {
      Failed = cannotRead(Path, What, toString(Got.takeError()));
      break;
    }
    if (*Got == 0)
      break;
    InLast += *Got;
    Total += *Got;
    if (Total > Limit) {
      Failed = TooLarge();
      break;
    }
  }
  if (Path != "-")
    sys::fs::closeFile(FD);
  if (Failed)
    return Failed;
  std::unique_ptr<WritableMemoryBuffer> Buf =
      WritableMemoryBuffer::getNewUninitMemBuffer(size_t(Total), Path == "-" ? "<stdin>" : Path);
  if (!Buf)
    return cannotRead(Path, What, "out of memory");
  for (size_t K = 0, Done = 0; K != Chunks.size(); ++K) {
    size_t N = std::min<size_t>(ChunkBytes, size_t(Total) - Done);
    std::memcpy(Buf->getBufferStart() + Done, Chunks[K].get(), N);
    Done += N;
  }
  return std::unique_ptr<MemoryBuffer>(std::move(Buf));
}

} // namespace collc
