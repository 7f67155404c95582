//===- runtime/local/LocalCommunicator.h - Seed 002 over the local driver -*- C++ -*-===//

#ifndef COLLC_RUNTIME_LOCAL_LOCALCOMMUNICATOR_H
#define COLLC_RUNTIME_LOCAL_LOCALCOMMUNICATOR_H

#include "runtime/interfaces/Communicator.h"
#include "runtime/interfaces/EagerComm.h"

#include <chrono>
#include <memory>

namespace collc::rt {

/// This rank's communicator in a local group (ranks are threads of this
/// process): every rank of \p GroupName calls it with its own \p Rank.
llvm::Expected<std::shared_ptr<Communicator>>
createLocalCommunicator(llvm::StringRef GroupName, size_t Size, size_t Rank,
                        CommunicatorOptions Opts = {});

/// This process's eager communicator (runtime/interfaces/EagerComm.h) in group
/// \p GroupName, every wait bounded by \p Timeout.
llvm::Expected<std::unique_ptr<EagerComm>> createLocalEagerComm(llvm::StringRef GroupName,
                                                                size_t Size, size_t Rank,
                                                                std::chrono::milliseconds Timeout);

} // namespace collc::rt

#endif
