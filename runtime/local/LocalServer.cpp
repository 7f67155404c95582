//===- runtime/local/LocalServer.cpp - Seed 001 over the local driver ------===//

#include "runtime/local/LocalServer.h"

#include "runtime/local/LocalDriver.h"
#include "runtime/seeds/ServerCore.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

using D = local::LocalDriver;

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

Error LocalServer::send(const CopyDescriptor &Desc, ElemType T, StreamId Stream, DeviceId Dst) {
  return Impl->kick(Impl->send(Desc, T, Dst, Impl->stream(Stream)), Stream);
}

Error LocalServer::recv(Handle H, ElemType T, StreamId Stream, DeviceId Src) {
  return Impl->kick(Impl->recv(H, T, Src, Impl->stream(Stream)), Stream);
}

} // namespace collc::rt
