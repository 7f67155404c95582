//===- runtime/shm/Transport.cpp - shm, engine, or auto --------------------===//

#include "runtime/shm/Transport.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <cstdlib>

using namespace llvm;

namespace collc::rt::shm {

namespace {
/// setTransport's choice: 0 none, else 1 + the Transport.
std::atomic<uint8_t> Chosen{0};
} // namespace

StringRef transportName(Transport T) {
  switch (T) {
  case Transport::Auto:
    return "auto";
  case Transport::Shm:
    return "shm";
  case Transport::Engine:
    return "engine";
  }
  return "?";
}

Expected<Transport> parseTransport(StringRef Text, StringRef Origin) {
  for (Transport T : {Transport::Auto, Transport::Shm, Transport::Engine})
    if (Text == transportName(T))
      return T;
  return makeError(ErrorKind::InvalidArgument,
                   formatv("{0} '{1}': expected auto, shm or engine", Origin, Text));
}

void setTransport(std::optional<Transport> T) {
  Chosen.store(T ? uint8_t(1 + uint8_t(*T)) : 0, std::memory_order_relaxed);
}

Expected<Transport> processTransport() {
  if (uint8_t C = Chosen.load(std::memory_order_relaxed))
    return Transport(C - 1);
  if (const char *V = getenv(TransportVariable))
    return parseTransport(V, TransportVariable);
  return Transport::Auto;
}

} // namespace collc::rt::shm
