//===- runtime/interfaces/HostSession.cpp - DistributedSession's checks and completion ---===//

#include "runtime/interfaces/HostSession.h"

using namespace llvm;

namespace collc::rt {

Error checkValueShape(StringRef What, const ValueDescriptor &Desc) {
  for (size_t I = 0; I != Desc.Shape.size(); ++I)
    if (Desc.Shape[I] < 0)
      return makeError(ErrorKind::InvalidArgument,
                       formatv("{0}: dimension {1} of the shape is {2}; expected a size >= 0", What,
                               I, Desc.Shape[I]));
  return Error::success();
}

/// A value the backend can read: memory of the size its descriptor says.
Error checkHostValue(StringRef What, const HostValue &V) {
  if (Error E = checkValueShape(What, V.Desc))
    return E;
  uint64_t Have = V.Data ? V.Data->size() : 0;
  if (Have != V.Desc.bytes())
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: the value holds {1} bytes but its descriptor ({2}) needs {3}",
                             What, Have, elemTypeName(V.Desc.Type), V.Desc.bytes()));
  return Error::success();
}

Expected<HostValue> HostCompletion::wait() {
  if (Waited)
    return makeError(ErrorKind::InvalidArgument, "a completion is waited for once");
  Waited = true;
  if (Error E = S->waitFor(Ticket))
    return E;
  return std::move(Result);
}

} // namespace collc::rt
