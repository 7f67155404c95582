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
    W.resize(At + wordsFor(K.Key.size()) + 1 + (K.Id ? IdWords : 0), 0);
    memcpy(&W[At], K.Key.data(), K.Key.size());
    At += wordsFor(K.Key.size());
    W[At] = K.Id ? 1 : 0;
    if (K.Id)
      memcpy(&W[At + 1], &*K.Id, sizeof(ncclUniqueId));
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
    if (Words.size() - At < wordsFor(Bytes) + 1)
      return Malformed(formatv("entry {0} has a {1}-byte key but only {2} words follow", I, Bytes,
                               Words.size() - At));
    KeyedId K;
    K.Key.assign(reinterpret_cast<const char *>(&Words[At]), Bytes);
    At += wordsFor(Bytes);
    uint32_t HasId = Words[At++];
    if (HasId > 1)
      return Malformed(formatv("entry {0} says {1} where 0 or 1 (an id follows) belongs", I, HasId));
    if (HasId) {
      if (Words.size() - At < IdWords)
        return Malformed(formatv("entry {0}'s id has only {1} of its {2} words", I,
                                 Words.size() - At, IdWords));
      ncclUniqueId Id;
      memcpy(&Id, &Words[At], sizeof(ncclUniqueId));
      K.Id = Id;
      At += IdWords;
    }
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

Expected<std::vector<KeyedId>> mintLedIds(const NcclRankPlan &L, StringRef Prefix, IdMinter Mint) {
  std::vector<KeyedId> Out;
  if (L.Root.Rank != 0)
    return Out;
  std::string Key = commKey(Prefix, L.Root.Key);
  Expected<ncclUniqueId> Id = Mint(Key);
  if (!Id)
    return Id.takeError();
  Out.push_back({std::move(Key), *Id});
  return Out;
}

Expected<std::unique_ptr<UniqueIdExchange>> gatherUniqueIds(const NcclRankPlan &L, StringRef Prefix,
                                                            WorldGather &World, IdMinter Mint) {
  std::string RootKey = commKey(Prefix, L.Root.Key);
  Expected<std::vector<KeyedId>> Mine = mintLedIds(L, Prefix, Mint);
  if (!Mine)
    return Mine.takeError();
  if (Mine->empty()) // the key this rank needs, for the others to compare
    Mine->push_back({RootKey, std::nullopt});
  Expected<std::vector<std::vector<uint32_t>>> All = allGatherRagged(World, encodeKeyedIds(*Mine));
  if (!All)
    return All.takeError();
  // Who minted the root's id, to name both ranks of an id minted twice.
  int64_t MintedBy = -1;
  StringMap<ncclUniqueId> Table;
  for (int64_t R = 0; R != int64_t(All->size()); ++R) {
    Expected<std::vector<KeyedId>> Ids = decodeKeyedIds((*All)[R], R);
    if (!Ids)
      return Ids.takeError();
    for (KeyedId &K : *Ids) {
      if (K.Key != RootKey)
        return makeError(ErrorKind::Mismatch,
                         formatv("rank {0} derives the NCCL communicator '{1}', rank {2} '{3}': "
                                 "do they run the same plan, with the same prefix?",
                                 R, K.Key, World.rank(), RootKey),
                         R);
      if (!K.Id)
        continue;
      if (MintedBy >= 0)
        return makeError(ErrorKind::Mismatch,
                         formatv("ranks {0} and {1} both minted the NCCL unique id of '{2}': do "
                                 "they run the same plan?",
                                 MintedBy, R, K.Key),
                         R);
      MintedBy = R;
      Table[K.Key] = *K.Id;
    }
  }
  if (MintedBy < 0)
    return makeError(ErrorKind::Mismatch,
                     formatv("rank {0}: no rank minted the NCCL unique id of communicator {1} "
                             "('{2}'), which its rank 0 should have: do the ranks run the same "
                             "plan?",
                             World.rank(), L.Root.Label, RootKey));
  return createTableIdExchange(std::move(Table));
}

} // namespace collc::rt::nccl
