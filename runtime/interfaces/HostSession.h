//===- runtime/interfaces/HostSession.h - DistributedSession over any host driver -*- C++ -*-===//
//
// The DistributedSession adapter, written once over a driver whose memory
// is the host's and whose comm stream is a HostStream (local, mpi, gloo).
// Values are HostValues; each submission is enqueued on the session's own
// comm stream and kicked, and its completion holds the input and the result
// until waited for. The session runs over its world only: any other scope
// is refused as Unsupported (fail-closed, as the interface asks).
//
// Backends instantiate it (runtime/local/LocalSession.h, ...); create()
// joins the world by name, so a backend whose join accepts only its whole
// world (mpi) works unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_HOSTSESSION_H
#define COLLC_RUNTIME_INTERFACES_HOSTSESSION_H

#include "runtime/exec/CollectiveDriver.h"
#include "runtime/exec/GroupJoin.h"
#include "runtime/exec/HostStream.h"
#include "runtime/exec/Timeout.h"
#include "runtime/interfaces/DistributedSession.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <concepts>

namespace collc::rt {

/// A driver the host session can run on: host memory, a HostStream.
template <typename D>
concept HostDriver = ExecutorDriver<D> && std::same_as<typename D::CommStream, HostStream *>;

/// The argument checks every host session shares (HostSession.cpp).
llvm::Error checkValueShape(llvm::StringRef What, const ValueDescriptor &Desc);
llvm::Error checkHostValue(llvm::StringRef What, const HostValue &V);

/// A completion on a host comm stream: it holds the input and the result
/// until waited for.
class HostCompletion : public Completion<HostValue> {
public:
  HostCompletion(HostStream *S, uint64_t Ticket, HostValue Input, HostValue Result)
      : S(S), Ticket(Ticket), Input(std::move(Input)), Result(std::move(Result)) {}
  bool ready() const override { return S->done(Ticket); }
  llvm::Expected<HostValue> wait() override;

private:
  HostStream *S;
  uint64_t Ticket;
  HostValue Input;
  HostValue Result;
  bool Waited = false;
};

template <HostDriver D> class HostSession : public DistributedSession<HostValue> {
public:
  /// This process (or thread) is rank \p Rank of \p World, in the group
  /// named \p Name.
  static llvm::Expected<std::unique_ptr<HostSession>>
  create(llvm::StringRef Name, size_t World, size_t Rank,
         std::chrono::milliseconds Timeout = defaultTimeout()) {
    llvm::Expected<typename D::Communicator> C = joinGroup<D>(Name, World, Rank, Timeout);
    if (!C)
      return C.takeError();
    return std::unique_ptr<HostSession>(new HostSession(*C, World, Rank));
  }

  DistributedSessionDescriptor descriptor() const override {
    return {D::name().str(), World, Rank, "cpu"};
  }

  DistributedCapabilities capabilities() const override {
    DistributedCapabilities C;
    C.AllReduceSum = C.AllGather = C.AllToAllV = C.SendReceive = C.AllGatherWords = true;
    return C;
  }

  llvm::Expected<Submission<HostValue>> allReduceSum(const CollectiveScope &Scope,
                                                     const HostValue &In) override {
    if (llvm::Error E = checkScope(Scope))
      return E;
    if (llvm::Error E = checkHostValue("all_reduce_sum", In))
      return E;
    HostValue Out = HostValue::zeros(In.Desc);
    auto E = D::elements(In.Desc.Type, In.Desc.bytes());
    if (!E)
      return E.takeError();
    if (llvm::Error Err =
            D::allReduce(Comm, resource(In), resource(Out), *E, ReduceOp::Sum, stream()))
      return Err;
    return submitted(In, std::move(Out));
  }

  llvm::Expected<Submission<HostValue>> allGather(const CollectiveScope &Scope,
                                                  const HostValue &In) override {
    if (llvm::Error E = checkScope(Scope))
      return E;
    if (llvm::Error E = checkHostValue("all_gather", In))
      return E;
    ValueDescriptor OutDesc = In.Desc;
    OutDesc.Shape.insert(OutDesc.Shape.begin(), int64_t(World));
    HostValue Out = HostValue::zeros(OutDesc);
    auto E = D::elements(In.Desc.Type, In.Desc.bytes());
    if (!E)
      return E.takeError();
    if (llvm::Error Err = D::allGather(Comm, resource(In), resource(Out), *E, stream()))
      return Err;
    return submitted(In, std::move(Out));
  }

  llvm::Expected<Submission<HostValue>> allToAllV(const CollectiveScope &Scope, const HostValue &In,
                                                  llvm::ArrayRef<size_t> SendRows,
                                                  llvm::ArrayRef<size_t> RecvRows) override {
    if (llvm::Error E = checkScope(Scope))
      return E;
    if (llvm::Error E = checkHostValue("all_to_all_v", In))
      return E;
    if (In.Desc.Shape.empty())
      return makeError(ErrorKind::InvalidArgument,
                       "all_to_all_v moves rows: the input is a scalar");
    int64_t Row = In.Desc.numElements() / std::max<int64_t>(1, In.Desc.Shape[0]);
    std::vector<uint64_t> Send, Recv;
    size_t Received = 0;
    for (size_t X : SendRows)
      Send.push_back(uint64_t(X) * Row);
    for (size_t X : RecvRows) {
      Recv.push_back(uint64_t(X) * Row);
      Received += X;
    }
    ValueDescriptor OutDesc = In.Desc;
    OutDesc.Shape[0] = int64_t(Received);
    HostValue Out = HostValue::zeros(OutDesc);
    if (llvm::Error Err =
            D::allToAllV(Comm, resource(In), resource(Out), In.Desc.Type, Send, Recv, stream()))
      return Err;
    return submitted(In, std::move(Out));
  }

  llvm::Expected<Submission<HostValue>> send(const CollectiveScope &Scope, size_t Peer,
                                             const HostValue &In) override {
    if (llvm::Error E = checkScope(Scope))
      return E;
    if (llvm::Error E = checkHostValue("send", In))
      return E;
    auto E = D::elements(In.Desc.Type, In.Desc.bytes());
    if (!E)
      return E.takeError();
    if (llvm::Error Err = D::send(Comm, resource(In), *E, Peer, stream()))
      return Err;
    return submitted(In, In);
  }

  llvm::Expected<Submission<HostValue>> receive(const CollectiveScope &Scope, size_t Peer,
                                                const ValueDescriptor &Desc) override {
    if (llvm::Error E = checkScope(Scope))
      return E;
    if (llvm::Error E = checkValueShape("receive", Desc))
      return E;
    HostValue Out = HostValue::zeros(Desc);
    auto E = D::elements(Desc.Type, Desc.bytes());
    if (!E)
      return E.takeError();
    if (llvm::Error Err = D::recv(Comm, resource(Out), *E, Peer, stream()))
      return Err;
    return submitted(HostValue(), std::move(Out));
  }

  llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Local) override {
    // Synchronous, on this thread: finish what is queued first (the ranks
    // would otherwise pair it with different operations).
    if (llvm::Error E = D::synchronize(stream()))
      return E;
    return D::allGatherWords(Comm, Local, stream());
  }

  const typename D::Communicator &driverComm() const { return Comm; }

private:
  HostSession(typename D::Communicator Comm, size_t World, size_t Rank)
      : Comm(std::move(Comm)), World(World), Rank(Rank) {}

  HostStream *stream() const { return D::streamOf(Stream); }
  static typename D::Resource resource(const HostValue &V) {
    return V.Data ? D::resource(V.Data->data(), V.Data->size()) : D::resource(nullptr, 0);
  }
  llvm::Error checkScope(const CollectiveScope &S) const {
    if (S.Group != "world")
      return makeError(
          ErrorKind::Unsupported,
          llvm::formatv("the {0} session runs over its world only, not '{1}'", D::name(), S.Group));
    return llvm::Error::success();
  }
  llvm::Expected<Submission<HostValue>> submitted(HostValue In, HostValue Out) {
    D::flush(stream()); // a submission progresses on its own
    Submission<HostValue> S;
    S.Done = std::make_unique<HostCompletion>(stream(), D::record(stream()), std::move(In),
                                              std::move(Out));
    return S;
  }

  typename D::Communicator Comm;
  size_t World, Rank;
  typename D::StreamOwner Stream = D::createStream("session");
};

} // namespace collc::rt

#endif
