//===- tools/collc/SourceChunks.cpp - Split test inputs ----------------------===//

#include "tools/collc/SourceChunks.h"

#include "ir/InputFile.h"

#include "llvm/ADT/SmallVector.h"

using namespace llvm;

namespace collc {

Expected<std::vector<SourceChunk>> loadSourceChunks(StringRef Path, bool Split, SourceMgr &SM) {
  Expected<std::unique_ptr<MemoryBuffer>> File = readInputFile(Path, "");
  if (!File)
    return File.takeError();
  StringRef Text = (*File)->getBuffer();
  unsigned Id = SM.AddNewSourceBuffer(std::move(*File), SMLoc());
  if (!Split)
    return std::vector<SourceChunk>{{Id, Text}};
  std::vector<SourceChunk> Chunks;
  size_t ChunkStart = 0, LineStart = 0;
  while (LineStart <= Text.size()) {
    size_t LineEnd = Text.find('\n', LineStart);
    if (LineEnd == StringRef::npos)
      LineEnd = Text.size();
    if (Text.slice(LineStart, LineEnd).rtrim() == ChunkSeparator) {
      Chunks.push_back({Id, Text.slice(ChunkStart, LineStart)});
      ChunkStart = std::min(LineEnd + 1, Text.size());
    }
    LineStart = LineEnd + 1;
  }
  Chunks.push_back({Id, Text.slice(ChunkStart, Text.size())});
  return Chunks;
}

} // namespace collc
