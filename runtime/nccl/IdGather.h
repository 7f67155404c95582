//===- runtime/nccl/IdGather.h - NCCL unique ids in one all-gather -*- C++ -*-===//
//
// The unique-id exchange of a run with one process per rank, done before
// the NcclExecutor is created. One communicator is made from an id, the
// world's root (every other is split from it: NcclLowering.h): world rank
// 0 mints its id, and one all-gather of (key, id) over the run's CPU world
// (runtime/launch/WorldGather.h: MPI's or Gloo's) gives it to every rank;
// the returned exchange holds it and serves it once. The wire format keeps
// the key every other rank needs, so that ranks that derive different keys
// fail together, at once, naming both.
//
// On the wire, a rank's words are: the number of entries, then for each the
// key's length in bytes, the key padded to whole words, one word (1: an id
// follows; 0: the rank names a key it needs) and, when it follows, the
// id's 128 bytes (32 words). ncclGetUniqueId needs no GPU, so all of this runs (and
// is tested) on a CPU machine.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_IDGATHER_H
#define COLLC_RUNTIME_NCCL_IDGATHER_H

#include "runtime/launch/WorldGather.h"
#include "runtime/nccl/NcclLowering.h"
#include "runtime/nccl/UniqueIdExchange.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc::rt::nccl {

struct KeyedId {
  std::string Key;
  /// None: the sender names a key it needs, and mints no id.
  std::optional<ncclUniqueId> Id;
};

std::vector<uint32_t> encodeKeyedIds(llvm::ArrayRef<KeyedId> Ids);
/// \p Words as rank \p From sent them; an error names the rank and what is
/// malformed.
llvm::Expected<std::vector<KeyedId>> decodeKeyedIds(llvm::ArrayRef<uint32_t> Words, int64_t From);

using IdMinter = llvm::function_ref<llvm::Expected<ncclUniqueId>(llvm::StringRef Key)>;
/// ncclGetUniqueId.
llvm::Expected<ncclUniqueId> mintUniqueId(llvm::StringRef Key);

/// The id of \p L's root communicator if this rank leads it (world rank
/// 0), keyed by commKey(\p Prefix, ...); none otherwise.
llvm::Expected<std::vector<KeyedId>> mintLedIds(const NcclRankPlan &L, llvm::StringRef Prefix,
                                                IdMinter Mint = mintUniqueId);

/// Mints this rank's ids (or names the key it needs), gathers every rank's
/// over \p World, and returns the exchange of the id of \p L's root
/// communicator. Every rank of the world calls it. An error names a rank
/// that derived another key, a key two ranks minted, or the root's when no
/// rank minted it.
llvm::Expected<std::unique_ptr<UniqueIdExchange>> gatherUniqueIds(const NcclRankPlan &L,
                                                                  llvm::StringRef Prefix,
                                                                  WorldGather &World,
                                                                  IdMinter Mint = mintUniqueId);

} // namespace collc::rt::nccl

#endif
