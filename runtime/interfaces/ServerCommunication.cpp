//===- runtime/interfaces/ServerCommunication.cpp - ServerCommunication defaults ----===//

#include "runtime/interfaces/ServerCommunication.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc::rt {

ServerCommunication::~ServerCommunication() = default;

static Error disabled(StringRef What) {
  return makeError(ErrorKind::Unsupported,
                   formatv("{0}: server communication is not enabled for this server", What));
}

Error ServerCommunication::syncCollective(StreamId) { return disabled("sync_collective"); }
Error ServerCommunication::commInit(ArrayRef<DeviceId>) { return disabled("comm_init"); }
Error ServerCommunication::allReduce(Binding, Binding, ElemType, StreamId, ReduceOp,
                                     ArrayRef<DeviceId>) {
  return disabled("all_reduce");
}
Error ServerCommunication::send(const CopyDescriptor &, ElemType, StreamId, DeviceId) {
  return disabled("send");
}
Error ServerCommunication::recv(Handle, ElemType, StreamId, DeviceId) { return disabled("recv"); }

Error checkContiguous(const CopyDescriptor &Desc) {
  if (Desc.Strides.empty())
    return Error::success();
  if (Desc.Strides.size() != Desc.Shape.size())
    return makeError(ErrorKind::InvalidArgument, formatv("{0} strides for a shape of rank {1}",
                                                         Desc.Strides.size(), Desc.Shape.size()));
  int64_t Expect = 1;
  for (size_t I = Desc.Shape.size(); I-- > 0;) {
    if (Desc.Shape[I] != 1 && Desc.Strides[I] != Expect)
      return makeError(ErrorKind::Unsupported,
                       formatv("send needs row-contiguous data: dimension {0} has stride {1}, "
                               "expected {2}",
                               I, Desc.Strides[I], Expect));
    Expect *= Desc.Shape[I];
  }
  return Error::success();
}

} // namespace collc::rt
