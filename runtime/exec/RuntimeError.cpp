//===- runtime/exec/RuntimeError.cpp - Errors of communication ------------------===//

#include "runtime/exec/RuntimeError.h"

#include "ir/Quoting.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

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

std::string errorKindKey(ErrorKind K) {
  std::string Key = errorKindName(K).str();
  std::replace(Key.begin(), Key.end(), ' ', '_');
  return Key;
}

std::optional<ErrorKind> parseErrorKindKey(StringRef Key) {
  for (ErrorKind K : {ErrorKind::InvalidArgument, ErrorKind::Unsupported, ErrorKind::Mismatch,
                      ErrorKind::Timeout, ErrorKind::PeerLost, ErrorKind::Broken,
                      ErrorKind::Backend})
    if (errorKindKey(K) == Key)
      return K;
  return std::nullopt;
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
