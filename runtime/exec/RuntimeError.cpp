//===- runtime/exec/RuntimeError.cpp - Errors of communication ------------------===//

#include "runtime/exec/RuntimeError.h"

#include "ir/Quoting.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace collc::rt {

char RuntimeError::ID = 0;

StringRef errorKindName(ErrorKind K) {
  switch (K) {
  case ErrorKind::InvalidArgument:
    return "invalid argument";
  case ErrorKind::Unsupported:
    return "unsupported";
  case ErrorKind::Mismatch:
    return "mismatch";
  case ErrorKind::Timeout:
    return "timeout";
  case ErrorKind::PeerLost:
    return "peer lost";
  case ErrorKind::Broken:
    return "broken";
  case ErrorKind::Backend:
    return "backend";
  }
  llvm_unreachable("bad error kind");
}

void RuntimeError::log(raw_ostream &OS) const { OS << Message; }

Error makeError(ErrorKind Kind, const Twine &Message, int64_t Peer) {
  return make_error<RuntimeError>(Kind, escapeForMessage(Message.str()), Peer);
}

ErrorParts takeErrorParts(Error E, ErrorKind Otherwise) {
  ErrorParts P{Otherwise, "", -1};
  handleAllErrors(
      std::move(E),
      [&](const RuntimeError &R) {
        P.Kind = R.kind();
        P.Peer = R.peer();
        P.Text = R.text();
      },
      [&](const ErrorInfoBase &B) { P.Text = B.message(); });
  return P;
}

} // namespace collc::rt
