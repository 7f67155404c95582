//===- plan/PlanDigest.cpp - The digest of a plan -----------------===//

#include "plan/PlanDigest.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

using namespace llvm;

namespace collc::plan {

void PlanDigester::update(StringRef Bytes) {
  while (!Bytes.empty()) {
    size_t Take = std::min(Bytes.size(), BlockSize - Block.size());
    Block.append(Bytes.data(), Take);
    Bytes = Bytes.drop_front(Take);
    if (Block.size() == BlockSize) {
      BlockHashes.push_back(xxHash64(Block));
      Block.clear();
    }
  }
}

std::string PlanDigester::final() {
  BlockHashes.push_back(xxHash64(Block));
  Block.clear();
  uint64_t H = xxHash64(StringRef(reinterpret_cast<const char *>(BlockHashes.data()),
                                  BlockHashes.size() * sizeof(uint64_t)));
  BlockHashes.clear();
  std::string S;
  raw_string_ostream OS(S);
  OS << "xxh64:" << format_hex_no_prefix(H, 16);
  return OS.str();
}

} // namespace collc::plan
