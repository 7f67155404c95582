//===- tools/collc/SourceChunks.h - Split test inputs ---------------*- C++ -*-===//
//
// Golden test files hold several cases separated by a line `// -----`.
// Each case becomes its own buffer in one SourceMgr, padded with the
// newlines before it so that diagnostics give the line in the whole file.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_SOURCECHUNKS_H
#define COLLC_COMPILER_SOURCECHUNKS_H

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <vector>

namespace collc {

/// Reads \p Path ("-" for stdin) and adds one buffer per case to \p SM
/// (the whole file when \p Split is false). Returns the buffer ids.
llvm::Expected<std::vector<unsigned>> loadSourceChunks(llvm::StringRef Path, bool Split,
                                                       llvm::SourceMgr &SM);

/// The separator printed between the outputs of split cases.
constexpr const char *ChunkSeparator = "// -----";

} // namespace collc

#endif // COLLC_COMPILER_SOURCECHUNKS_H
