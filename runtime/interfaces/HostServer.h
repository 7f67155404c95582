//===- runtime/interfaces/HostServer.h - ServerCommunication over any host driver -*- C++ -*-===//
//
// The ServerCommunication adapter, written once over a driver whose comm
// stream is a HostStream (local, mpi, gloo): ServerCore's groups and checks,
// one comm stream per server stream id, and enqueued work kicked so that it
// progresses until sync_collective. Backends instantiate it
// (runtime/local/LocalServer.h, ...).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_HOSTSERVER_H
#define COLLC_RUNTIME_INTERFACES_HOSTSERVER_H

#include "runtime/interfaces/HostSession.h"
#include "runtime/interfaces/ServerCore.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

namespace collc::rt {

template <HostDriver D> class HostServer : public ServerCommunication {
public:
  /// \p WorldSize: the number of processes, for a driver that builds
  /// groups only from its whole world (see ServerCore); 0 elsewhere.
  explicit HostServer(DeviceId Device, size_t WorldSize = 0) : Core(Device, WorldSize) {}
  DeviceId device() const { return Core.device(); }

  bool serverCommEnabled() const override { return true; }

  llvm::Error syncCollective(StreamId Stream) override { return D::synchronize(stream(Stream)); }

  llvm::Error commInit(llvm::ArrayRef<DeviceId> Devices) override { return Core.commInit(Devices); }

  llvm::Error allReduce(Binding Src, Binding Dst, ElemType T, StreamId Stream, ReduceOp Op,
                        llvm::ArrayRef<DeviceId> Devices) override {
    return kick(Core.allReduce(Src, Dst, T, Op, Devices, stream(Stream)), Stream);
  }

  llvm::Error send(const CopyDescriptor &Desc, ElemType T, StreamId Stream, DeviceId Dst) override {
    return kick(Core.send(Desc, T, Dst, stream(Stream)), Stream);
  }

  llvm::Error recv(Handle H, ElemType T, StreamId Stream, DeviceId Src) override {
    return kick(Core.recv(H, T, Src, stream(Stream)), Stream);
  }

private:
  HostStream *stream(StreamId Id) {
    typename D::StreamOwner &S = Streams[Id];
    if (!S)
      S = D::createStream(llvm::formatv("server.stream{0}", Id).str());
    return D::streamOf(S);
  }

  /// Enqueued work progresses until sync_collective.
  llvm::Error kick(llvm::Error E, StreamId Stream) {
    if (!E)
      D::flush(stream(Stream));
    return E;
  }

  // Streams last, so destroyed first: their queued work uses the core's groups.
  ServerCore<D> Core;
  std::map<StreamId, typename D::StreamOwner> Streams;
};

} // namespace collc::rt

#endif
