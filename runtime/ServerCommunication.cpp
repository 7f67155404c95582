//===- runtime/ServerCommunication.cpp - seed 001 over the local driver ----===//

#include "runtime/ServerCommunication.h"

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

class LocalServerImpl {
public:
  /// Groups by their sorted device list, joined on first use.
  std::map<std::vector<DeviceId>, D::Communicator> Groups;
  std::vector<DeviceId> InitDevices;
  std::map<StreamId, D::StreamOwner> Streams;

  D::CommStream stream(StreamId Id) {
    D::StreamOwner &S = Streams[Id];
    if (!S)
      S = D::createStream(formatv("server.stream{0}", Id).str());
    return D::streamOf(S);
  }

  Expected<D::Communicator> group(DeviceId Self, ArrayRef<DeviceId> Devices) {
    std::vector<DeviceId> Sorted(Devices.begin(), Devices.end());
    llvm::sort(Sorted);
    if (std::adjacent_find(Sorted.begin(), Sorted.end()) != Sorted.end())
      return makeError(ErrorKind::InvalidArgument, "a device is listed twice");
    auto Me = llvm::find(Sorted, Self);
    if (Me == Sorted.end())
      return makeError(ErrorKind::InvalidArgument,
                       formatv("device {0} is not among the devices it communicates with", Self));
    auto It = Groups.find(Sorted);
    if (It != Groups.end())
      return It->second;
    std::string Name = "server:";
    for (DeviceId Dv : Sorted)
      Name += std::to_string(Dv) + ",";
    Expected<D::UniqueId> Id = D::groupId({Name});
    if (!Id)
      return Id.takeError();
    Expected<D::Communicator> C = D::join(*Id, Sorted.size(), size_t(Me - Sorted.begin()));
    if (!C)
      return C.takeError();
    Groups[Sorted] = *C;
    return *C;
  }

  /// The comm_init group, for point-to-point.
  Expected<D::Communicator> initGroup(DeviceId Self) {
    if (InitDevices.empty())
      return makeError(ErrorKind::InvalidArgument,
                       formatv("device {0} sends or receives before comm_init", Self));
    return group(Self, InitDevices);
  }

  /// The rank of \p Peer in the comm_init group.
  Expected<size_t> rankOf(DeviceId Peer) const {
    std::vector<DeviceId> Sorted = InitDevices;
    llvm::sort(Sorted);
    auto It = llvm::find(Sorted, Peer);
    if (It == Sorted.end())
      return makeError(ErrorKind::InvalidArgument,
                       formatv("device {0} is not in the comm_init group", Peer));
    return size_t(It - Sorted.begin());
  }
};

LocalServer::LocalServer(DeviceId Device)
    : Device(Device), Impl(std::make_unique<LocalServerImpl>()) {}
LocalServer::~LocalServer() = default;

Error LocalServer::commInit(ArrayRef<DeviceId> Devices) {
  if (Devices.empty())
    return makeError(ErrorKind::InvalidArgument, "comm_init needs at least one device");
  Expected<D::Communicator> C = Impl->group(Device, Devices);
  if (!C)
    return C.takeError();
  Impl->InitDevices.assign(Devices.begin(), Devices.end());
  return Error::success();
}

Error LocalServer::syncCollective(StreamId Stream) { return D::synchronize(Impl->stream(Stream)); }

Error LocalServer::allReduce(Binding Src, Binding Dst, ElemType T, StreamId Stream, ReduceOp Op,
                             ArrayRef<DeviceId> Devices) {
  Expected<D::Communicator> C = Impl->group(Device, Devices);
  if (!C)
    return C.takeError();
  Expected<D::Elems> E = D::elements(T, Src.Bytes);
  if (!E)
    return E.takeError();
  if (Error Err = D::allReduce(*C, D::resource(Src.Data, Src.Bytes),
                               D::resource(Dst.Data, Dst.Bytes), *E, Op, Impl->stream(Stream)))
    return Err;
  D::flush(Impl->stream(Stream)); // progresses until sync_collective
  return Error::success();
}

/// Whether \p Desc describes row-contiguous elements.
static Error checkContiguous(const CopyDescriptor &Desc) {
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
  if (Error E = checkContiguous(Desc))
    return E;
  Expected<D::Communicator> C = Impl->initGroup(Device);
  if (!C)
    return C.takeError();
  Expected<size_t> Peer = Impl->rankOf(Dst);
  if (!Peer)
    return Peer.takeError();
  Expected<D::Elems> E = D::elements(T, Desc.Memory.Bytes);
  if (!E)
    return E.takeError();
  if (Error Err = D::send(*C, D::resource(Desc.Memory.Data, Desc.Memory.Bytes), *E, *Peer,
                          Impl->stream(Stream)))
    return Err;
  D::flush(Impl->stream(Stream));
  return Error::success();
}

Error LocalServer::recv(Handle H, ElemType T, StreamId Stream, DeviceId Src) {
  Expected<D::Communicator> C = Impl->initGroup(Device);
  if (!C)
    return C.takeError();
  Expected<size_t> Peer = Impl->rankOf(Src);
  if (!Peer)
    return Peer.takeError();
  Expected<D::Elems> E = D::elements(T, H.Bytes);
  if (!E)
    return E.takeError();
  if (Error Err = D::recv(*C, D::resource(H.Data, H.Bytes), *E, *Peer, Impl->stream(Stream)))
    return Err;
  D::flush(Impl->stream(Stream));
  return Error::success();
}

} // namespace collc::rt
