//===- runtime/nccl/IdGather.cpp - NCCL unique ids in one all-gather -----===//

#include "runtime/nccl/IdGather.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/nccl/CudaError.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace llvm;

namespace collc::rt::nccl {

namespace {

constexpr size_t IdWords = sizeof(ncclUniqueId) / 4;
static_assert(sizeof(ncclUniqueId) % 4 == 0, "an NCCL unique id is whole words");

size_t wordsFor(size_t Bytes) { return (Bytes + 3) / 4; }

} // namespace

std::vector<uint32_t> encodeKeyedIds(ArrayRef<KeyedId> Ids) {
  std::vector<uint32_t> W = {uint32_t(Ids.size())};
  for (const KeyedId &K : Ids) {
    W.push_back(uint32_t(K.Key.size()));
    size_t At = W.size();
    W.resize(At + wordsFor(K.Key.size()) + IdWords, 0);
    memcpy(&W[At], K.Key.data(), K.Key.size());
    memcpy(&W[At + wordsFor(K.Key.size())], &K.Id, sizeof(ncclUniqueId));
  }
  return W;
}

Expected<std::vector<KeyedId>> decodeKeyedIds(ArrayRef<uint32_t> Words, int64_t From) {
  auto Malformed = [&](const Twine &What) {
    return makeError(ErrorKind::Mismatch,
                     formatv("the NCCL unique ids rank {0} sent are malformed: ", From) + What,
                     From);
  };
  if (Words.empty())
    return Malformed("no words");
  std::vector<KeyedId> Out;
  size_t At = 1;
  for (uint32_t I = 0; I != Words[0]; ++I) {
    if (At >= Words.size())
      return Malformed(formatv("{0} ids announced, {1} present", Words[0], I));
    size_t Bytes = Words[At++];
    if (Words.size() - At < wordsFor(Bytes) + IdWords)
      return Malformed(formatv("id {0} has a {1}-byte key but only {2} words follow", I, Bytes,
                               Words.size() - At));
    KeyedId K;
    K.Key.assign(reinterpret_cast<const char *>(&Words[At]), Bytes);
    At += wordsFor(Bytes);
    memcpy(&K.Id, &Words[At], sizeof(ncclUniqueId));
    At += IdWords;
    Out.push_back(std::move(K));
  }
  if (At != Words.size())
    return Malformed(formatv("{0} words left over after {1} ids", Words.size() - At, Words[0]));
  return Out;
}

Expected<ncclUniqueId> mintUniqueId(StringRef Key) {
  ncclUniqueId Id;
  if (Error E = checkNccl(ncclGetUniqueId(&Id), "ncclGetUniqueId for '" + Key + "'"))
    return E;
  return Id;
}

Expected<std::vector<KeyedId>> mintLedIds(const Lowering &L, StringRef Prefix, IdMinter Mint) {
  std::vector<KeyedId> Out;
  for (const CommDesc &D : L.Comms) {
    if (D.Rank != 0)
      continue;
    std::string Key = commKey(Prefix, D.Key);
    Expected<ncclUniqueId> Id = Mint(Key);
    if (!Id)
      return Id.takeError();
    Out.push_back({std::move(Key), *Id});
  }
  return Out;
}

Expected<std::unique_ptr<UniqueIdExchange>> gatherUniqueIds(const Lowering &L, StringRef Prefix,
                                                            WorldGather &World, IdMinter Mint) {
  Expected<std::vector<KeyedId>> Mine = mintLedIds(L, Prefix, Mint);
  if (!Mine)
    return Mine.takeError();
  Expected<std::vector<std::vector<uint32_t>>> All = allGatherRagged(World, encodeKeyedIds(*Mine));
  if (!All)
    return All.takeError();
  // Which of every rank's ids this rank needs; who minted each, to name
  // both ranks of a key minted twice.
  StringMap<int64_t> Needed;
  for (const CommDesc &D : L.Comms)
    Needed[commKey(Prefix, D.Key)] = -1;
  StringMap<ncclUniqueId> Table;
  for (int64_t R = 0; R != int64_t(All->size()); ++R) {
    Expected<std::vector<KeyedId>> Ids = decodeKeyedIds((*All)[R], R);
    if (!Ids)
      return Ids.takeError();
    for (KeyedId &K : *Ids) {
      auto It = Needed.find(K.Key);
      if (It == Needed.end())
        continue;
      if (It->second >= 0)
        return makeError(ErrorKind::Mismatch,
                         formatv("ranks {0} and {1} both minted the NCCL unique id of '{2}': do "
                                 "they run the same plan?",
                                 It->second, R, K.Key),
                         R);
      It->second = R;
      Table[K.Key] = K.Id;
    }
  }
  for (const CommDesc &D : L.Comms)
    if (Needed.lookup(commKey(Prefix, D.Key)) < 0)
      return makeError(ErrorKind::Mismatch,
                       formatv("rank {0}: no rank minted the NCCL unique id of communicator {1} "
                               "('{2}'), which its rank 0 should have: do the ranks run the same "
                               "plan?",
                               World.rank(), D.Label, commKey(Prefix, D.Key)));
  return createTableIdExchange(std::move(Table));
}

} // namespace collc::rt::nccl
