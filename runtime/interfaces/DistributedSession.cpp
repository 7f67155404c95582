//===- runtime/interfaces/DistributedSession.cpp - DistributedSession values -----===//

#include "runtime/interfaces/DistributedSession.h"


#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

int64_t ValueDescriptor::numElements() const {
  int64_t N = 1;
  for (int64_t X : Shape)
    N *= X;
  return N;
}

HostValue HostValue::zeros(ValueDescriptor Desc) {
  HostValue V;
  V.Data = std::make_shared<std::vector<uint8_t>>(Desc.bytes(), 0);
  V.Desc = std::move(Desc);
  return V;
}

} // namespace collc::rt
