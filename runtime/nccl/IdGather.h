//===- runtime/nccl/IdGather.h - NCCL unique ids in one all-gather -*- C++ -*-===//
//
// The unique-id exchange of a run with one process per rank, done before
// the NcclExecutor is created: every world rank mints the id of each
// communicator it leads (its rank 0 in that communicator, from the
// CUDA-free lowering), and one all-gather of (key, id) over the run's CPU
// world (runtime/launch/WorldGather.h: MPI's or Gloo's) gives every rank
// the ids of all communicators; the returned exchange holds this rank's and
// serves each once. As nccl-tests do under mpirun, with every communicator
// in the one collective (a communicator's members need not all be
// reachable from its leader in any other way).
//
// On the wire, a rank's words are: the number of ids, then for each the
// key's length in bytes, the key padded to whole words, and the id's 128
// bytes (32 words). ncclGetUniqueId needs no GPU, so all of this runs (and
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
#include <string>
#include <vector>

namespace collc::rt::nccl {

struct KeyedId {
  std::string Key;
  ncclUniqueId Id;
};

std::vector<uint32_t> encodeKeyedIds(llvm::ArrayRef<KeyedId> Ids);
/// \p Words as rank \p From sent them; an error names the rank and what is
/// malformed.
llvm::Expected<std::vector<KeyedId>> decodeKeyedIds(llvm::ArrayRef<uint32_t> Words, int64_t From);

using IdMinter = llvm::function_ref<llvm::Expected<ncclUniqueId>(llvm::StringRef Key)>;
/// ncclGetUniqueId.
llvm::Expected<ncclUniqueId> mintUniqueId(llvm::StringRef Key);

/// The ids of the communicators of \p L that this rank leads, keyed by
/// commKey(\p Prefix, ...), in the lowering's order.
llvm::Expected<std::vector<KeyedId>> mintLedIds(const Lowering &L, llvm::StringRef Prefix,
                                                IdMinter Mint = mintUniqueId);

/// Mints this rank's ids, gathers every rank's over \p World, and returns
/// the exchange of the ids of \p L's communicators. Every rank of the world
/// calls it, member of a communicator or not. An error names a key two
/// ranks minted, or a communicator of this rank that no rank minted.
llvm::Expected<std::unique_ptr<UniqueIdExchange>> gatherUniqueIds(const Lowering &L,
                                                                  llvm::StringRef Prefix,
                                                                  WorldGather &World,
                                                                  IdMinter Mint = mintUniqueId);

} // namespace collc::rt::nccl

#endif
