//===- ir/InputFile.h - Reading an input file, bounded -------------*- C++ -*-===//
//
// Every file collc reads (a program, a plan, a link file) goes through
// readInputFile: `-` is standard input, and at most MaxInputBytes are read,
// so an endless input (`collc simulate /dev/zero`, a pipe that never ends)
// is an error that says so, not memory growing until the system refuses.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_INPUTFILE_H
#define COLLC_IR_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>

namespace collc {

/// The most a program, plan or link file may hold: far beyond the largest
/// plan collc writes (a million comms is a few hundred MiB).
constexpr uint64_t MaxInputBytes = uint64_t(1) << 30;

/// The contents of \p Path (`-`: standard input). \p What names the input in
/// an error ("plan", "link file", or nothing): "cannot read plan 'x': why".
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef Path, llvm::StringRef What, uint64_t Limit = MaxInputBytes);

} // namespace collc

#endif
