//===- runtime/gloo/GlooFailure.h - Gloo's exceptions in collc's terms -*- C++ -*-===//
//
// Gloo reports failures as exception text: "Timed out waiting 2000ms for
// recv operation to complete", "Connection closed by peer [10.0.0.3]:41234",
// "Read error [127.0.0.1]:5002: Connection reset by peer". collc's errors
// carry a kind and the rank to blame, so the text is read here: its kind by
// its words, the peer by the listening address it names, matched against
// the addresses the group's ranks published when they joined.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GLOOFAILURE_H
#define COLLC_RUNTIME_GLOO_GLOOFAILURE_H

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace collc::rt::gloo {

struct GlooFailure {
  ErrorKind Kind = ErrorKind::Backend;
  /// The rank whose address the text names, or -1.
  int64_t Peer = -1;
};

/// Reads Gloo's exception text \p Text; \p Addresses[r] is rank r's
/// listening address as "[HOST]:PORT" (empty for ranks not to match,
/// this process's own among them).
GlooFailure classifyFailure(llvm::StringRef Text, llvm::ArrayRef<std::string> Addresses);

/// "[HOST]:PORT" of Gloo's address text (which may add "$SEQ" or more).
std::string listeningAddress(llvm::StringRef AddressText);

} // namespace collc::rt::gloo

#endif
