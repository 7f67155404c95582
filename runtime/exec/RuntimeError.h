//===- runtime/exec/RuntimeError.h - Errors of communication ----------*- C++ -*-===//
//
// The third kind of error (after located user errors and internal asserts):
// something went wrong while communicating. It says what kind, and names the
// peer or device when one is to blame, so a hang or a crash on one rank
// reads as "rank 3 did not arrive at all_reduce #57 within 2000 ms" on the
// others. Its text quotes what peers, stores and libraries said, so
// makeError escapes it as the IR's diagnostics are escaped (control bytes,
// a NUL, broken UTF-8 become \xHH: ir/Quoting.h), and it prints safely.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_RUNTIMEERROR_H
#define COLLC_RUNTIME_EXEC_RUNTIMEERROR_H

#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace collc::rt {

enum class ErrorKind {
  InvalidArgument, ///< refused before anything was enqueued; nothing changed
  Unsupported,     ///< the backend cannot do this (a type, an op)
  Mismatch,        ///< ranks issued different collectives (size, type, op)
  Timeout,         ///< a peer did not arrive in time
  PeerLost,        ///< a peer is known to be gone
  Broken,          ///< the communicator failed earlier and refuses further work
  Backend,         ///< the library underneath failed (NCCL, CUDA, Gloo)
};
llvm::StringRef errorKindName(ErrorKind K);
/// The kind as a key of a file or a message ("peer_lost", "timeout"): its
/// name with '_' for ' ' (flight record dumps).
std::string errorKindKey(ErrorKind K);
std::optional<ErrorKind> parseErrorKindKey(llvm::StringRef Key);

class RuntimeError : public llvm::ErrorInfo<RuntimeError> {
public:
  static char ID;
  RuntimeError(ErrorKind Kind, std::string Message, int64_t Peer = -1)
      : Kind(Kind), Message(std::move(Message)), Peer(Peer) {}
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

  ErrorKind kind() const { return Kind; }
  /// The rank to blame, or -1.
  int64_t peer() const { return Peer; }
  const std::string &text() const { return Message; }

private:
  ErrorKind Kind;
  std::string Message;
  int64_t Peer;
};

/// A RuntimeError of \p Message, escaped (see above).
llvm::Error makeError(ErrorKind Kind, const llvm::Twine &Message, int64_t Peer = -1);

/// An error taken apart (consumed): a RuntimeError's kind, text and peer;
/// any other error's message, as kind \p Otherwise with no peer.
struct ErrorParts {
  ErrorKind Kind;
  std::string Text;
  int64_t Peer;
};
ErrorParts takeErrorParts(llvm::Error E, ErrorKind Otherwise);

} // namespace collc::rt

#endif
