//===- runtime/exec/Timeout.cpp - The runtime's one timeout default --------===//

#include "runtime/exec/Timeout.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>

using namespace llvm;

namespace collc::rt {

Expected<std::chrono::milliseconds> parseTimeoutMs(StringRef Text, StringRef Origin) {
  constexpr uint64_t Max = 86400000;
  uint64_t Ms = 0;
  // getAsInteger refuses signs, spaces, suffixes and overflow.
  if (Text.getAsInteger(10, Ms) || Ms == 0 || Ms > Max)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0} is '{1}': expected a timeout in milliseconds, 1 to {2}", Origin,
                             Text, Max));
  return std::chrono::milliseconds(Ms);
}

Expected<std::chrono::milliseconds> timeoutFromEnvironment() {
  const char *Value = std::getenv(kTimeoutVariable);
  if (!Value)
    return kBuiltinTimeout;
  return parseTimeoutMs(Value, kTimeoutVariable);
}

/// DefaultTimeoutScope's timeout on this thread; 0 when none.
static thread_local std::chrono::milliseconds ScopedTimeout{0};

DefaultTimeoutScope::DefaultTimeoutScope(std::chrono::milliseconds T) : Saved(ScopedTimeout) {
  ScopedTimeout = T;
}

DefaultTimeoutScope::~DefaultTimeoutScope() { ScopedTimeout = Saved; }

std::chrono::milliseconds defaultTimeout() {
  if (ScopedTimeout.count() > 0)
    return ScopedTimeout;
  Expected<std::chrono::milliseconds> T = timeoutFromEnvironment();
  if (!T) {
    consumeError(T.takeError());
    return kBuiltinTimeout;
  }
  return *T;
}

} // namespace collc::rt
