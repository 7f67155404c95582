//===- runtime/exec/DigestHandshake.cpp - Every rank runs the same plan --------===//

#include "runtime/exec/DigestHandshake.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

namespace collc::rt {

static uint64_t digestValue(llvm::StringRef Digest) {
  uint64_t V = 0;
  if (Digest.consume_front("xxh64:") && !Digest.getAsInteger(16, V))
    return V;
  uint64_t H = 1469598103934665603ull; // FNV-1a for any other form
  for (char C : Digest)
    H = (H ^ uint8_t(C)) * 1099511628211ull;
  return H;
}

std::array<uint32_t, 2> digestWords(const plan::Plan &P) {
  uint64_t Mine = digestValue(P.Digest);
  return {uint32_t(Mine), uint32_t(Mine >> 32)};
}

llvm::Error compareDigests(const plan::Plan &P, int64_t Rank, llvm::ArrayRef<uint32_t> All) {
  if (All.size() != size_t(2 * P.World))
    return makeError(ErrorKind::Mismatch,
                     llvm::formatv("the digest handshake gathered {0} words from {1} ranks; "
                                   "expected 2 per rank",
                                   All.size(), P.World));
  std::vector<uint64_t> Digests;
  for (int64_t R = 0; R != P.World; ++R)
    Digests.push_back(uint64_t(All[2 * R]) | (uint64_t(All[2 * R + 1]) << 32));
  uint64_t Mine = Digests[Rank];
  if (llvm::all_of(Digests, [&](uint64_t X) { return X == Mine; }))
    return llvm::Error::success();
  // Name who runs what.
  std::string Report;
  std::vector<uint64_t> Seen;
  for (uint64_t X : Digests) {
    if (llvm::is_contained(Seen, X))
      continue;
    Seen.push_back(X);
    plan::RankSet Who;
    Who.All = false;
    for (int64_t R = 0; R != P.World; ++R)
      if (Digests[R] == X)
        Who.Ranks.push_back(R);
    Report +=
        llvm::formatv("{0}ranks {1} run xxh64:{2:x-16}", Report.empty() ? "" : "; ", Who.str(), X)
            .str();
  }
  int64_t Other = 0;
  while (Other < P.World && Digests[Other] == Mine)
    ++Other;
  return makeError(ErrorKind::Mismatch,
                   "plan digests differ across ranks (" + Report +
                       "); refusing to run: compile one plan for every rank",
                   Other < P.World ? Other : -1);
}

llvm::Error exchangeDigests(
    const plan::Plan &P, int64_t Rank,
    llvm::function_ref<llvm::Expected<std::vector<uint32_t>>(llvm::ArrayRef<uint32_t>)> Gather) {
  llvm::Expected<std::vector<uint32_t>> All = Gather(digestWords(P));
  if (!All)
    return All.takeError();
  return compareDigests(P, Rank, *All);
}

} // namespace collc::rt
