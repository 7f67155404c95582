//===- runtime/exec/Timeout.h - The runtime's one timeout default -*- C++ -*-===//
//
// Every wait of the runtime is bounded by a timeout, on every backend: the
// local driver's rendezvous, the executors, the interface adapters, and on NCCL
// communicator initialization and finalization, ncclInProgress polls, the
// comm stream and the unique-id files. Its default is 300 s; the
// environment variable COLLC_TIMEOUT_MS replaces that default everywhere
// (the GPU device check uses it to keep every wait short), and an explicit
// option (ExecutorOptions::Timeout, CommunicatorOptions::Timeout,
// NcclExecutorOptions::Timeout, `collc run --timeout-ms`, ...) replaces it for
// one object.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_TIMEOUT_H
#define COLLC_RUNTIME_EXEC_TIMEOUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>

namespace collc::rt {

constexpr std::chrono::milliseconds kBuiltinTimeout{300000};
constexpr const char *kTimeoutVariable = "COLLC_TIMEOUT_MS";

/// A timeout in whole milliseconds, 1 to 86400000 (one day); \p Origin
/// names where the text came from in the error.
llvm::Expected<std::chrono::milliseconds> parseTimeoutMs(llvm::StringRef Text,
                                                         llvm::StringRef Origin);

/// COLLC_TIMEOUT_MS when set, else the built-in 300 s; an error when it is
/// set but malformed.
llvm::Expected<std::chrono::milliseconds> timeoutFromEnvironment();

/// The default of every timeout of the runtime: timeoutFromEnvironment(),
/// or the built-in 300 s when the variable is malformed (the entry points,
/// NcclExecutor::create and `collc run` among them, refuse to start then).
std::chrono::milliseconds defaultTimeout();

/// While it lives, defaultTimeout() on this thread is \p T: an object with
/// a timeout of its own (an executor's) joins its groups, which wait with
/// the default (the driver's join takes no timeout), under that timeout.
class DefaultTimeoutScope {
public:
  explicit DefaultTimeoutScope(std::chrono::milliseconds T);
  ~DefaultTimeoutScope();
  DefaultTimeoutScope(const DefaultTimeoutScope &) = delete;
  DefaultTimeoutScope &operator=(const DefaultTimeoutScope &) = delete;

private:
  std::chrono::milliseconds Saved;
};

} // namespace collc::rt

#endif
