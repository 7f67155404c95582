//===- runtime/interfaces/ServerCore.h - ServerCommunication over any driver -*- C++ -*-===//
//
// What every ServerCommunication backend shares: groups named by their
// sorted device lists and joined on first use (a device's rank is its place
// in that list), the comm_init group for point-to-point, and the argument
// checks. The backend supplies the comm stream of each call and what
// happens around it (the local server kicks its stream; the NCCL server
// fences the caller's CUDA stream).
//
// A driver that cannot join a group by name (GroupsBySplit: mpi) builds
// every group but its world by a split that every process must call; a
// server's collective is called only by the devices of its group, so such
// a server serves only the group of the whole world and refuses any other
// as Unsupported.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_SERVERCORE_H
#define COLLC_RUNTIME_INTERFACES_SERVERCORE_H

#include "runtime/exec/CollectiveDriver.h"
#include "runtime/interfaces/ServerCommunication.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace collc::rt {

template <typename D> class ServerCore {
public:
  using Comm = typename D::Communicator;
  using CommStream = typename D::CommStream;

  /// \p WorldSize: the number of processes, for a GroupsBySplit driver (0:
  /// unknown, the driver's join decides).
  explicit ServerCore(DeviceId Device, size_t WorldSize = 0)
      : Device(Device), WorldSize(WorldSize) {}

  llvm::Error commInit(llvm::ArrayRef<DeviceId> Devices) {
    if (Devices.empty())
      return makeError(ErrorKind::InvalidArgument, "comm_init needs at least one device");
    llvm::Expected<Comm> C = group(Devices);
    if (!C)
      return C.takeError();
    InitDevices.assign(Devices.begin(), Devices.end());
    return llvm::Error::success();
  }

  llvm::Error allReduce(Binding Src, Binding Dst, ElemType T, ReduceOp Op,
                        llvm::ArrayRef<DeviceId> Devices, CommStream S) {
    llvm::Expected<Comm> C = group(Devices);
    if (!C)
      return C.takeError();
    auto E = D::elements(T, Src.Bytes);
    if (!E)
      return E.takeError();
    return D::allReduce(*C, D::resource(Src.Data, Src.Bytes), D::resource(Dst.Data, Dst.Bytes),
                        *E, Op, S);
  }

  llvm::Error send(const CopyDescriptor &Desc, ElemType T, DeviceId Dst, CommStream S) {
    if (llvm::Error E = checkContiguous(Desc))
      return E;
    llvm::Expected<Comm> C = initGroup();
    if (!C)
      return C.takeError();
    llvm::Expected<size_t> Peer = rankOf(Dst);
    if (!Peer)
      return Peer.takeError();
    auto E = D::elements(T, Desc.Memory.Bytes);
    if (!E)
      return E.takeError();
    return D::send(*C, D::resource(Desc.Memory.Data, Desc.Memory.Bytes), *E, *Peer, S);
  }

  llvm::Error recv(Handle H, ElemType T, DeviceId Src, CommStream S) {
    llvm::Expected<Comm> C = initGroup();
    if (!C)
      return C.takeError();
    llvm::Expected<size_t> Peer = rankOf(Src);
    if (!Peer)
      return Peer.takeError();
    auto E = D::elements(T, H.Bytes);
    if (!E)
      return E.takeError();
    return D::recv(*C, D::resource(H.Data, H.Bytes), *E, *Peer, S);
  }

  /// The group of \p Devices (this server's among them), joined on first use.
  llvm::Expected<Comm> group(llvm::ArrayRef<DeviceId> Devices) {
    std::vector<DeviceId> Sorted(Devices.begin(), Devices.end());
    llvm::sort(Sorted);
    if (std::adjacent_find(Sorted.begin(), Sorted.end()) != Sorted.end())
      return makeError(ErrorKind::InvalidArgument, "a device is listed twice");
    auto Me = llvm::find(Sorted, Device);
    if (Me == Sorted.end())
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("device {0} is not among the devices it communicates with",
                                     Device));
    auto It = Groups.find(Sorted);
    if (It != Groups.end())
      return It->second;
    if constexpr (requires { D::GroupsBySplit; })
      if (WorldSize != 0 && Sorted.size() != WorldSize)
        return makeError(ErrorKind::Unsupported,
                         llvm::formatv("the {0} server of device {1} cannot form a group of {2} "
                                       "of its {3} processes: {0} builds groups other than the "
                                       "world by a split every process calls; list every "
                                       "process's device",
                                       D::name(), Device, Sorted.size(), WorldSize));
    std::string Name = "server:";
    for (DeviceId Dv : Sorted)
      Name += std::to_string(Dv) + ",";
    auto Id = D::groupId({Name});
    if (!Id)
      return Id.takeError();
    llvm::Expected<Comm> C = D::join(*Id, Sorted.size(), size_t(Me - Sorted.begin()));
    if (!C)
      return C.takeError();
    Groups[Sorted] = *C;
    return *C;
  }

  /// The comm_init group, for point-to-point.
  llvm::Expected<Comm> initGroup() {
    if (InitDevices.empty())
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("device {0} sends or receives before comm_init", Device));
    return group(InitDevices);
  }

  /// The rank of \p Peer in the comm_init group.
  llvm::Expected<size_t> rankOf(DeviceId Peer) const {
    std::vector<DeviceId> Sorted = InitDevices;
    llvm::sort(Sorted);
    auto It = llvm::find(Sorted, Peer);
    if (It == Sorted.end())
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("device {0} is not in the comm_init group", Peer));
    return size_t(It - Sorted.begin());
  }

  DeviceId device() const { return Device; }
  std::vector<Comm> groups() const {
    std::vector<Comm> Out;
    for (const auto &[Key, C] : Groups)
      Out.push_back(C);
    return Out;
  }

private:
  DeviceId Device;
  size_t WorldSize;
  std::map<std::vector<DeviceId>, Comm> Groups;
  std::vector<DeviceId> InitDevices;
};

} // namespace collc::rt

#endif
