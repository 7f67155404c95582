//===- runtime/exec/DigestHandshake.cpp - Every rank runs the same plan --------===//

#include "runtime/exec/DigestHandshake.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
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

std::string whoRunsWhat(size_t World, llvm::function_ref<bool(size_t, size_t)> Same,
                        llvm::function_ref<std::string(size_t)> Describe) {
  std::string Report;
  for (size_t R = 0; R != World; ++R) {
    if (llvm::any_of(llvm::seq<size_t>(0, R), [&](size_t Q) { return Same(Q, R); }))
      continue; // told with the group's first rank
    plan::RankSet Who;
    Who.All = false;
    for (size_t Q = R; Q != World; ++Q)
      if (Same(Q, R))
        Who.Ranks.push_back(int64_t(Q));
    Report +=
        llvm::formatv("{0}ranks {1} run {2}", Report.empty() ? "" : "; ", Who.str(), Describe(R))
            .str();
  }
  return Report;
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
  std::string Report = whoRunsWhat(
      size_t(P.World), [&](size_t A, size_t B) { return Digests[A] == Digests[B]; },
      [&](size_t R) { return llvm::formatv("xxh64:{0:x-16}", Digests[R]).str(); });
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
