//===- runtime/nccl/Timeout.h - The NCCL backend's one timeout -*- C++ -*-===//
//
// Every wait of the NCCL backend is bounded by one timeout: communicator
// initialization and finalization, ncclInProgress polls, the comm stream
// (synchronize, the digest handshake, the split sizes of all_to_all_v, the
// destructor), and the unique-id files. Its default is 300 s; the
// environment variable COLLC_TIMEOUT_MS replaces that default everywhere
// (the device check uses it to keep every wait short), and an explicit
// option (NcclExecutorOptions::Timeout, CommunicatorOptions::Timeout, the
// NcclServer and createFileIdExchange arguments) replaces it for one object.
// CUDA-free, so that it is tested on any machine.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_TIMEOUT_H
#define COLLC_RUNTIME_NCCL_TIMEOUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>

namespace collc::rt::nccl {

constexpr std::chrono::milliseconds kBuiltinTimeout{300000};
constexpr const char *kTimeoutVariable = "COLLC_TIMEOUT_MS";

/// A timeout in whole milliseconds, 1 to 86400000 (one day); \p Origin
/// names where the text came from in the error.
llvm::Expected<std::chrono::milliseconds> parseTimeoutMs(llvm::StringRef Text,
                                                         llvm::StringRef Origin);

/// COLLC_TIMEOUT_MS when set, else the built-in 300 s; an error when it is
/// set but malformed.
llvm::Expected<std::chrono::milliseconds> timeoutFromEnvironment();

/// The default of every timeout of the backend: timeoutFromEnvironment(),
/// or the built-in 300 s when the variable is malformed (the entry points,
/// NcclExecutor::create among them, refuse to start then).
std::chrono::milliseconds defaultTimeout();

} // namespace collc::rt::nccl

#endif
