//===- tools/collc/SourceChunks.cpp - Split test inputs ----------------------===//

#include "tools/collc/SourceChunks.h"

#include "llvm/ADT/SmallVector.h"

using namespace llvm;

namespace collc {

Expected<std::vector<unsigned>> loadSourceChunks(StringRef Path, bool Split, SourceMgr &SM) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> File = MemoryBuffer::getFileOrSTDIN(Path);
  if (!File)
    return createStringError(File.getError(), "cannot read '%s': %s", Path.str().c_str(),
                             File.getError().message().c_str());
  std::vector<unsigned> Ids;
  if (!Split) {
    Ids.push_back(SM.AddNewSourceBuffer(std::move(*File), SMLoc()));
    return Ids;
  }
  StringRef Text = (*File)->getBuffer();
  StringRef Name = (*File)->getBufferIdentifier();
  size_t ChunkStart = 0, LineStart = 0;
  unsigned LinesBefore = 0, Line = 0;
  auto AddChunk = [&](size_t End) {
    std::string Padded(LinesBefore, '\n');
    Padded += Text.slice(ChunkStart, End).str();
    Ids.push_back(SM.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(Padded, Name), SMLoc()));
  };
  while (LineStart <= Text.size()) {
    size_t LineEnd = Text.find('\n', LineStart);
    if (LineEnd == StringRef::npos)
      LineEnd = Text.size();
    StringRef L = Text.slice(LineStart, LineEnd).rtrim();
    if (L == ChunkSeparator) {
      AddChunk(LineStart);
      ChunkStart = LineEnd + 1 > Text.size() ? Text.size() : LineEnd + 1;
      LinesBefore = Line + 1;
    }
    ++Line;
    LineStart = LineEnd + 1;
  }
  AddChunk(Text.size());
  return Ids;
}

} // namespace collc
