//===- plan/PlanDigest.h - The digest of a plan ----------*- C++ -*-===//
//
// The digest detects plans that differ (ranks compiled different programs)
// or were damaged; it is not a cryptographic seal. It is xxHash64 over the
// agreed bytes in fixed 64 KiB blocks, then xxHash64 over the block hashes,
// so the writer (which streams) and the reader (which scans lines) get the
// same value however the bytes arrive. Fast enough that writing a
// million-op plan is bound by the disk, not the hash.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PLAN_PLANDIGEST_H
#define COLLC_PLAN_PLANDIGEST_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::plan {

class PlanDigester {
public:
  static constexpr size_t BlockSize = 1 << 16;
  PlanDigester() { Block.reserve(BlockSize); }
  void update(llvm::StringRef Bytes);
  /// "xxh64:<16 hex digits>".
  std::string final();

private:
  std::string Block;
  std::vector<uint64_t> BlockHashes;
};

} // namespace collc::plan

#endif
