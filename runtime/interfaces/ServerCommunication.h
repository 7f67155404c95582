//===- runtime/interfaces/ServerCommunication.h - Collectives by device id -*- C++ -*-===//
//
// One server per device in one process (a compute runtime's per-device
// server), communicating with the servers of other devices by device id.
// comm_init joins the devices into a group; collectives run on the server's
// streams and complete at sync_collective. The provided behaviour of a
// server without communication is to refuse, with an Unsupported error.
//
//   // On each device's thread:
//   LocalServer S(DeviceId);
//   S.commInit({0, 1, 2, 3});
//   S.allReduce(Src, Dst, ElemType::F32, /*stream=*/0, ReduceOp::Sum, {0, 1, 2, 3});
//   S.syncCollective(0);
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_SERVERCOMMUNICATION_H
#define COLLC_RUNTIME_INTERFACES_SERVERCOMMUNICATION_H

#include "ir/Types.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace collc::rt {

using DeviceId = uint32_t;
using StreamId = uint64_t;

/// Memory on a device (host memory for the local server).
struct Binding {
  void *Data = nullptr;
  uint64_t Bytes = 0;
};

/// What to send: a binding and how its elements are laid out. Only
/// row-contiguous layouts are sent; anything else is refused.
struct CopyDescriptor {
  Binding Memory;
  llvm::SmallVector<int64_t, 4> Shape;
  llvm::SmallVector<int64_t, 4> Strides; ///< in elements; empty means contiguous
  unsigned ElemSize = 0;
};

/// Whether \p Desc describes row-contiguous elements.
llvm::Error checkContiguous(const CopyDescriptor &Desc);

/// Where a receive writes.
using Handle = Binding;

class ServerCommunication {
public:
  virtual ~ServerCommunication();
  /// Whether this server communicates at all.
  virtual bool serverCommEnabled() const { return false; }

  /// Ensures the collectives queued on \p Stream have run.
  virtual llvm::Error syncCollective(StreamId Stream);
  /// Joins the devices in \p Devices (this server's among them) into a group.
  virtual llvm::Error commInit(llvm::ArrayRef<DeviceId> Devices);
  virtual llvm::Error allReduce(Binding Src, Binding Dst, ElemType T, StreamId Stream, ReduceOp Op,
                                llvm::ArrayRef<DeviceId> Devices);
  virtual llvm::Error send(const CopyDescriptor &Desc, ElemType T, StreamId Stream, DeviceId Dst);
  virtual llvm::Error recv(Handle H, ElemType T, StreamId Stream, DeviceId Src);
};

} // namespace collc::rt

#endif
