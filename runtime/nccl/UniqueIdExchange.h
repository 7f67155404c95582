//===- runtime/nccl/UniqueIdExchange.h - Sharing NCCL unique ids -*- C++ -*-===//
//
// Every member of an NCCL communicator must join with the same
// ncclUniqueId. One member mints it and the others obtain it by a key every
// member derives alike (the plan's communicator key under a run prefix):
//  - in one process, through a table (whichever rank asks first mints);
//  - across processes, through a shared directory: the minting rank writes
//    KEY.id atomically (write, then rename) and the others wait for it.
//  - across processes, from a table filled before the executor is created
//    (IdGather.h: one all-gather over the run's CPU world, MPI or Gloo).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_UNIQUEIDEXCHANGE_H
#define COLLC_RUNTIME_NCCL_UNIQUEIDEXCHANGE_H

#include "runtime/exec/Timeout.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <nccl.h>

#include <chrono>
#include <memory>
#include <string>

namespace collc::rt::nccl {

class UniqueIdExchange {
public:
  virtual ~UniqueIdExchange();
  /// The id for \p Key. \p Mints is true on exactly one member (its rank
  /// 0). With \p Members > 0 an in-process id serves that many joins and is
  /// then forgotten, so that a later communicator under the same key gets a
  /// fresh one (an NCCL unique id serves one communicator).
  virtual llvm::Expected<ncclUniqueId> idFor(llvm::StringRef Key, bool Mints,
                                             int64_t Members = 0) = 0;
};

/// The key of communicator \p Key of a run whose keys start with \p Prefix:
/// what every member asks the exchange for.
std::string commKey(llvm::StringRef Prefix, llvm::StringRef Key);

/// The process-wide table.
UniqueIdExchange &inProcessIds();

/// Files in \p Dir (which every process sees); a member that is not the
/// minter waits up to \p Timeout for the file.
std::unique_ptr<UniqueIdExchange>
createFileIdExchange(std::string Dir, std::chrono::milliseconds Timeout = defaultTimeout());

/// Ids known beforehand (IdGather.h), each served once: a second request
/// for a key, or one for a key it never held, is an error naming it.
std::unique_ptr<UniqueIdExchange> createTableIdExchange(llvm::StringMap<ncclUniqueId> Ids);

} // namespace collc::rt::nccl

#endif
