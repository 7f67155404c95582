//===- runtime/ServerCommunication.cpp - seed 001 over the local driver ----===//

#include "runtime/ServerCommunication.h"

#include "runtime/ServerCore.h"
#include "runtime/local/LocalDriver.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc::rt {

using D = local::LocalDriver;

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

class LocalServerImpl : public ServerCore<D> {
public:
  using ServerCore<D>::ServerCore;
  std::map<StreamId, D::StreamOwner> Streams;

  D::CommStream stream(StreamId Id) {
    D::StreamOwner &S = Streams[Id];
    if (!S)
      S = D::createStream(formatv("server.stream{0}", Id).str());
    return D::streamOf(S);
  }

  /// Enqueued work progresses until sync_collective.
  Error kick(Error E, StreamId Stream) {
    if (!E)
      D::flush(stream(Stream));
    return E;
  }
};

LocalServer::LocalServer(DeviceId Device)
    : Device(Device), Impl(std::make_unique<LocalServerImpl>(Device)) {}
LocalServer::~LocalServer() = default;

Error LocalServer::commInit(ArrayRef<DeviceId> Devices) { return Impl->commInit(Devices); }

Error LocalServer::syncCollective(StreamId Stream) { return D::synchronize(Impl->stream(Stream)); }

Error LocalServer::allReduce(Binding Src, Binding Dst, ElemType T, StreamId Stream, ReduceOp Op,
                             ArrayRef<DeviceId> Devices) {
  return Impl->kick(Impl->allReduce(Src, Dst, T, Op, Devices, Impl->stream(Stream)), Stream);
}

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

Error LocalServer::send(const CopyDescriptor &Desc, ElemType T, StreamId Stream, DeviceId Dst) {
  return Impl->kick(Impl->send(Desc, T, Dst, Impl->stream(Stream)), Stream);
}

Error LocalServer::recv(Handle H, ElemType T, StreamId Stream, DeviceId Src) {
  return Impl->kick(Impl->recv(H, T, Src, Impl->stream(Stream)), Stream);
}

} // namespace collc::rt
