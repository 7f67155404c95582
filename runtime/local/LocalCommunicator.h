//===- runtime/local/LocalCommunicator.h - Seed 002 over the local driver -*- C++ -*-===//

#ifndef COLLC_RUNTIME_LOCAL_LOCALCOMMUNICATOR_H
#define COLLC_RUNTIME_LOCAL_LOCALCOMMUNICATOR_H

#include "runtime/seeds/Communicator.h"

namespace collc::rt {

/// This rank's communicator in a local group (ranks are threads of this
/// process): every rank of \p GroupName calls it with its own \p Rank.
llvm::Expected<std::shared_ptr<Communicator>>
createLocalCommunicator(llvm::StringRef GroupName, size_t Size, size_t Rank,
                        CommunicatorOptions Opts = {});

} // namespace collc::rt

#endif
