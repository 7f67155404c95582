//===- tools/collc/SourceChunks.h - Split test inputs ---------------*- C++ -*-===//
//
// Golden test files hold several cases separated by a line `// -----`.
// The file is one buffer of a SourceMgr and each case a range of it, so
// diagnostics give the line in the whole file and splitting stays linear
// (padding each case with the lines before it made 50,000 cases quadratic).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_SOURCECHUNKS_H
#define COLLC_TOOLS_COLLC_SOURCECHUNKS_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <vector>

namespace collc {

/// One case: a range of buffer \p Buffer of the SourceMgr.
struct SourceChunk {
  unsigned Buffer;
  llvm::StringRef Text;
};

/// Reads \p Path ("-" for stdin) into \p SM and returns its cases (the whole
/// file when \p Split is false).
llvm::Expected<std::vector<SourceChunk>> loadSourceChunks(llvm::StringRef Path, bool Split,
                                                          llvm::SourceMgr &SM);

/// The separator printed between the outputs of split cases.
constexpr const char *ChunkSeparator = "// -----";

} // namespace collc

#endif // COLLC_TOOLS_COLLC_SOURCECHUNKS_H
