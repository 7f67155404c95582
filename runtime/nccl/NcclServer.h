//===- runtime/nccl/NcclServer.h - Collectives by device id on NCCL -*- C++ -*-===//
//
// Seed 001 on NCCL: one server per GPU in one process, each driven by its
// own thread. comm_init joins the GPUs (one NCCL rank per GPU, ranked by
// device id); a StreamId is the caller's CUDA stream (a cudaStream_t; 0 is
// the legacy default stream). Every call is fenced both ways: the comm
// stream waits for the work already on the caller's stream before the
// collective, and sync_collective makes the caller's stream wait for the
// comm stream, then waits on the host (bounded by the timeout, polling the
// communicators' errors) so that the collectives have run when it returns.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLSERVER_H
#define COLLC_RUNTIME_NCCL_NCCLSERVER_H

#include "runtime/exec/Timeout.h"
#include "runtime/interfaces/ServerCommunication.h"

#include <chrono>
#include <memory>

namespace collc::rt::nccl {

class NcclServerImpl;

class NcclServer : public ServerCommunication {
public:
  /// The server of CUDA device \p Device.
  explicit NcclServer(DeviceId Device, std::chrono::milliseconds Timeout = defaultTimeout());
  ~NcclServer() override;
  DeviceId device() const;

  bool serverCommEnabled() const override { return true; }
  llvm::Error syncCollective(StreamId Stream) override;
  llvm::Error commInit(llvm::ArrayRef<DeviceId> Devices) override;
  llvm::Error allReduce(Binding Src, Binding Dst, ElemType T, StreamId Stream, ReduceOp Op,
                        llvm::ArrayRef<DeviceId> Devices) override;
  llvm::Error send(const CopyDescriptor &Desc, ElemType T, StreamId Stream, DeviceId Dst) override;
  llvm::Error recv(Handle H, ElemType T, StreamId Stream, DeviceId Src) override;

private:
  std::unique_ptr<NcclServerImpl> Impl;
};

} // namespace collc::rt::nccl

#endif
