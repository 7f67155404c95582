//===- runtime/gloo/GlooFailure.cpp - Gloo's exceptions in collc's terms --===//

#include "runtime/gloo/GlooFailure.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace collc::rt::gloo {

std::string listeningAddress(StringRef AddressText) {
  // "[127.0.0.1]:5002$3": the host in brackets, the port, then whatever
  // Gloo appends (a sequence number).
  size_t Close = AddressText.find("]:");
  if (Close == StringRef::npos)
    return AddressText.str();
  size_t End = Close + 2;
  while (End < AddressText.size() && isDigit(AddressText[End]))
    ++End;
  return AddressText.take_front(End).str();
}

GlooFailure classifyFailure(StringRef Text, ArrayRef<std::string> Addresses) {
  GlooFailure F;
  std::string Lower = Text.lower();
  StringRef L(Lower);
  if (L.contains("timed out") || L.contains("timeout"))
    F.Kind = ErrorKind::Timeout;
  else if (L.contains("closed") || L.contains("reset by peer") || L.contains("broken pipe") ||
           L.contains("connection refused") || L.contains("read error") ||
           L.contains("write error"))
    F.Kind = ErrorKind::PeerLost;
  // The peer: the rank whose address appears, not followed by another digit
  // (port 500 must not match in port 5002).
  for (size_t R = 0; R != Addresses.size(); ++R) {
    StringRef A = Addresses[R];
    if (A.empty())
      continue;
    for (size_t At = Text.find(A); At != StringRef::npos; At = Text.find(A, At + 1)) {
      size_t After = At + A.size();
      if (After == Text.size() || !isDigit(Text[After])) {
        F.Peer = int64_t(R);
        return F;
      }
    }
  }
  return F;
}

} // namespace collc::rt::gloo
