//===- runtime/nccl/NcclServer.cpp - Collectives by device id on NCCL -----===//

#include "runtime/nccl/NcclServer.h"

#include "runtime/interfaces/ServerCore.h"
#include "runtime/nccl/CommStreamWait.h"
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclDriver.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace llvm;

namespace collc::rt::nccl {

using D = NcclDriver;

class NcclServerImpl : public ServerCore<D> {
public:
  NcclServerImpl(DeviceId Device, std::chrono::milliseconds Timeout)
      : ServerCore<D>(Device), Timeout(Timeout) {}

  ~NcclServerImpl() {
    cudaSetDevice(int(device()));
    for (auto &[Id, E] : Fences)
      cudaEventDestroy(E);
  }

  /// The comm stream serving caller stream \p Id, after a fence on it.
  Expected<cudaStream_t> fenced(StreamId Id) {
    if (Error E = checkCuda(cudaSetDevice(int(device())), formatv("cudaSetDevice({0})", device())))
      return E;
    D::StreamOwner &S = Streams[Id];
    if (!S) {
      S = D::createStream("server");
      if (!S)
        return makeError(ErrorKind::Backend,
                         formatv("cannot create a comm stream on device {0}", device()));
      cudaEvent_t E = nullptr;
      if (Error Err = checkCuda(cudaEventCreateWithFlags(&E, cudaEventDisableTiming),
                                "cudaEventCreateWithFlags"))
        return Err;
      Fences[Id] = E;
    }
    cudaStream_t Caller = reinterpret_cast<cudaStream_t>(Id);
    if (Error E = checkCuda(cudaEventRecord(Fences[Id], Caller),
                            formatv("cudaEventRecord on the caller's stream {0}", Id)))
      return E;
    if (Error E = checkCuda(cudaStreamWaitEvent(D::streamOf(S), Fences[Id], 0),
                            "cudaStreamWaitEvent (compute -> comm)"))
      return E;
    return D::streamOf(S);
  }

  Error sync(StreamId Id) {
    auto It = Streams.find(Id);
    if (It == Streams.end())
      return Error::success(); // nothing was queued for this stream
    cudaStream_t S = D::streamOf(It->second);
    if (Error E = checkCuda(cudaEventRecord(Fences[Id], S), "cudaEventRecord on the comm stream"))
      return E;
    if (Error E = checkCuda(cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(Id), Fences[Id], 0),
                            "cudaStreamWaitEvent (comm -> compute)"))
      return E;
    std::vector<NcclMembership *> Raw;
    for (const D::Communicator &C : groups()) {
      C->Timeout = Timeout;
      Raw.push_back(C.get());
    }
    return waitForStream(S, Raw, formatv("sync_collective on device {0}", device()).str());
  }

  std::chrono::milliseconds Timeout;
  std::map<StreamId, D::StreamOwner> Streams;
  std::map<StreamId, cudaEvent_t> Fences;
};

NcclServer::NcclServer(DeviceId Device, std::chrono::milliseconds Timeout)
    : Impl(std::make_unique<NcclServerImpl>(Device, Timeout)) {}
NcclServer::~NcclServer() = default;
DeviceId NcclServer::device() const { return Impl->device(); }

Error NcclServer::commInit(ArrayRef<DeviceId> Devices) {
  if (Error E = checkCuda(cudaSetDevice(int(device())), formatv("cudaSetDevice({0})", device())))
    return E;
  return Impl->commInit(Devices);
}

Error NcclServer::syncCollective(StreamId Stream) { return Impl->sync(Stream); }

Error NcclServer::allReduce(Binding Src, Binding Dst, ElemType T, StreamId Stream, ReduceOp Op,
                            ArrayRef<DeviceId> Devices) {
  Expected<cudaStream_t> S = Impl->fenced(Stream);
  if (!S)
    return S.takeError();
  return Impl->allReduce(Src, Dst, T, Op, Devices, *S);
}

Error NcclServer::send(const CopyDescriptor &Desc, ElemType T, StreamId Stream, DeviceId Dst) {
  Expected<cudaStream_t> S = Impl->fenced(Stream);
  if (!S)
    return S.takeError();
  return Impl->send(Desc, T, Dst, *S);
}

Error NcclServer::recv(Handle H, ElemType T, StreamId Stream, DeviceId Src) {
  Expected<cudaStream_t> S = Impl->fenced(Stream);
  if (!S)
    return S.takeError();
  return Impl->recv(H, T, Src, *S);
}

} // namespace collc::rt::nccl
