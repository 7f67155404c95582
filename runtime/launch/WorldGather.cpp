//===- runtime/launch/WorldGather.cpp - One all-gather over a run's world -===//

#include "runtime/launch/WorldGather.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc::rt {

WorldGather::~WorldGather() = default;

Expected<std::vector<std::vector<uint32_t>>> allGatherRagged(WorldGather &W,
                                                             ArrayRef<uint32_t> Local) {
  if (Local.size() > UINT32_MAX)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("rank {0} would gather {1} words; at most {2} fit", W.rank(),
                             Local.size(), UINT32_MAX));
  uint32_t Mine = uint32_t(Local.size());
  Expected<std::vector<uint32_t>> Lengths = W.allGatherWords(ArrayRef<uint32_t>(Mine));
  if (!Lengths)
    return Lengths.takeError();
  if (Lengths->size() != size_t(W.size()))
    return makeError(
        ErrorKind::InvalidArgument,
        formatv("the world of {0} ranks gathered {1} lengths", W.size(), Lengths->size()));
  uint32_t Longest = *std::max_element(Lengths->begin(), Lengths->end());
  std::vector<uint32_t> Padded(Local.begin(), Local.end());
  Padded.resize(Longest, 0);
  Expected<std::vector<uint32_t>> All = W.allGatherWords(Padded);
  if (!All)
    return All.takeError();
  if (All->size() != size_t(W.size()) * Longest)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("the world of {0} ranks gathered {1} words, expected {2}", W.size(),
                             All->size(), size_t(W.size()) * Longest));
  std::vector<std::vector<uint32_t>> Out(W.size());
  for (int64_t R = 0; R != W.size(); ++R) {
    auto First = All->begin() + R * Longest;
    Out[R].assign(First, First + (*Lengths)[R]);
  }
  return Out;
}

} // namespace collc::rt
