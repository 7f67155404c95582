//===- runtime/local/LocalServer.h - Seed 001 over the local driver -*- C++ -*-===//

#ifndef COLLC_RUNTIME_LOCAL_LOCALSERVER_H
#define COLLC_RUNTIME_LOCAL_LOCALSERVER_H

#include "runtime/seeds/ServerCommunication.h"

#include <memory>

namespace collc::rt {

class LocalServerImpl;

/// A server whose device is a thread of this process (the local backend).
class LocalServer : public ServerCommunication {
public:
  explicit LocalServer(DeviceId Device);
  ~LocalServer() override;
  DeviceId device() const { return Device; }

  bool serverCommEnabled() const override { return true; }
  llvm::Error syncCollective(StreamId Stream) override;
  llvm::Error commInit(llvm::ArrayRef<DeviceId> Devices) override;
  llvm::Error allReduce(Binding Src, Binding Dst, ElemType T, StreamId Stream, ReduceOp Op,
                        llvm::ArrayRef<DeviceId> Devices) override;
  llvm::Error send(const CopyDescriptor &Desc, ElemType T, StreamId Stream, DeviceId Dst) override;
  llvm::Error recv(Handle H, ElemType T, StreamId Stream, DeviceId Src) override;

private:
  DeviceId Device;
  std::unique_ptr<LocalServerImpl> Impl;
};

} // namespace collc::rt

#endif
