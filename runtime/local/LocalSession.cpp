//===- runtime/local/LocalSession.cpp - Seed 003 over the local driver -----===//

#include "runtime/local/LocalSession.h"

#include "runtime/local/LocalDriver.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

using D = local::LocalDriver;

namespace {

/// A completion on the local comm stream: it holds the input and the result
/// until waited for.
class LocalCompletion : public Completion<HostValue> {
public:
  LocalCompletion(HostStream *S, uint64_t Ticket, HostValue Input, HostValue Result)
      : S(S), Ticket(Ticket), Input(std::move(Input)), Result(std::move(Result)) {}
  bool ready() const override { return S->done(Ticket); }
  Expected<HostValue> wait() override {
    if (Waited)
      return makeError(ErrorKind::InvalidArgument, "a completion is waited for once");
    Waited = true;
    if (Error E = S->waitFor(Ticket))
      return E;
    return std::move(Result);
  }

private:
  HostStream *S;
  uint64_t Ticket;
  HostValue Input;
  HostValue Result;
  bool Waited = false;
};

} // namespace

class LocalSessionImpl {
public:
  D::Communicator Comm;
  size_t World, Rank;
  D::StreamOwner Stream = D::createStream("session");

  Error checkScope(const CollectiveScope &S) const {
    if (S.Group != "world")
      return makeError(ErrorKind::Unsupported,
                       formatv("the local session runs over its world only, not '{0}'", S.Group));
    return Error::success();
  }
  /// A value the backend can read: memory of the size its descriptor says.
  static Error checkShape(StringRef What, const ValueDescriptor &D) {
    for (size_t I = 0; I != D.Shape.size(); ++I)
      if (D.Shape[I] < 0)
        return makeError(ErrorKind::InvalidArgument,
                         formatv("{0}: dimension {1} of the shape is {2}; expected a size >= 0",
                                 What, I, D.Shape[I]));
    return Error::success();
  }
  static Error checkValue(StringRef What, const HostValue &V) {
    if (Error E = checkShape(What, V.Desc))
      return E;
    uint64_t Have = V.Data ? V.Data->size() : 0;
    if (Have != V.Desc.bytes())
      return makeError(ErrorKind::InvalidArgument,
                       formatv("{0}: the value holds {1} bytes but its descriptor ({2}) needs {3}",
                               What, Have, elemTypeName(V.Desc.Type), V.Desc.bytes()));
    return Error::success();
  }
  Expected<Submission<HostValue>> submitted(HostValue In, HostValue Out) {
    D::flush(Stream.get()); // a submission progresses on its own
    Submission<HostValue> S;
    S.Done = std::make_unique<LocalCompletion>(Stream.get(), D::record(Stream.get()), std::move(In),
                                               std::move(Out));
    return S;
  }
};

LocalSession::LocalSession(std::unique_ptr<LocalSessionImpl> I) : Impl(std::move(I)) {}
LocalSession::~LocalSession() = default;

Expected<std::unique_ptr<LocalSession>>
LocalSession::create(StringRef Name, size_t World, size_t Rank, std::chrono::milliseconds Timeout) {
  Expected<D::UniqueId> Id = D::groupId({Name.str()});
  if (!Id)
    return Id.takeError();
  Expected<D::Communicator> C = D::join(*Id, World, Rank);
  if (!C)
    return C.takeError();
  D::setTimeout(*C, Timeout);
  auto Impl = std::make_unique<LocalSessionImpl>();
  Impl->Comm = *C;
  Impl->World = World;
  Impl->Rank = Rank;
  return std::unique_ptr<LocalSession>(new LocalSession(std::move(Impl)));
}

DistributedSessionDescriptor LocalSession::descriptor() const {
  return {"local", Impl->World, Impl->Rank, "cpu"};
}

DistributedCapabilities LocalSession::capabilities() const {
  DistributedCapabilities C;
  C.AllReduceSum = C.AllGather = C.AllToAllV = C.SendReceive = C.AllGatherWords = true;
  return C;
}

Expected<Submission<HostValue>> LocalSession::allReduceSum(const CollectiveScope &Scope,
                                                           const HostValue &In) {
  if (Error E = Impl->checkScope(Scope))
    return E;
  if (Error E = LocalSessionImpl::checkValue("all_reduce_sum", In))
    return E;
  HostValue Out = HostValue::zeros(In.Desc);
  Expected<D::Elems> E = D::elements(In.Desc.Type, In.Desc.bytes());
  if (!E)
    return E.takeError();
  if (Error Err = D::allReduce(Impl->Comm, D::resource(In.Data->data(), In.Data->size()),
                               D::resource(Out.Data->data(), Out.Data->size()), *E, ReduceOp::Sum,
                               Impl->Stream.get()))
    return Err;
  return Impl->submitted(In, std::move(Out));
}

Expected<Submission<HostValue>> LocalSession::allGather(const CollectiveScope &Scope,
                                                        const HostValue &In) {
  if (Error E = Impl->checkScope(Scope))
    return E;
  if (Error E = LocalSessionImpl::checkValue("all_gather", In))
    return E;
  ValueDescriptor OutDesc = In.Desc;
  OutDesc.Shape.insert(OutDesc.Shape.begin(), int64_t(Impl->World));
  HostValue Out = HostValue::zeros(OutDesc);
  Expected<D::Elems> E = D::elements(In.Desc.Type, In.Desc.bytes());
  if (!E)
    return E.takeError();
  if (Error Err =
          D::allGather(Impl->Comm, D::resource(In.Data->data(), In.Data->size()),
                       D::resource(Out.Data->data(), Out.Data->size()), *E, Impl->Stream.get()))
    return Err;
  return Impl->submitted(In, std::move(Out));
}

Expected<Submission<HostValue>> LocalSession::allToAllV(const CollectiveScope &Scope,
                                                        const HostValue &In,
                                                        ArrayRef<size_t> SendRows,
                                                        ArrayRef<size_t> RecvRows) {
  if (Error E = Impl->checkScope(Scope))
    return E;
  if (Error E = LocalSessionImpl::checkValue("all_to_all_v", In))
    return E;
  if (In.Desc.Shape.empty())
    return makeError(ErrorKind::InvalidArgument, "all_to_all_v moves rows: the input is a scalar");
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
  if (Error Err = D::allToAllV(Impl->Comm, D::resource(In.Data->data(), In.Data->size()),
                               D::resource(Out.Data->data(), Out.Data->size()), In.Desc.Type, Send,
                               Recv, Impl->Stream.get()))
    return Err;
  return Impl->submitted(In, std::move(Out));
}

Expected<Submission<HostValue>> LocalSession::send(const CollectiveScope &Scope, size_t Peer,
                                                   const HostValue &In) {
  if (Error E = Impl->checkScope(Scope))
    return E;
  if (Error E = LocalSessionImpl::checkValue("send", In))
    return E;
  Expected<D::Elems> E = D::elements(In.Desc.Type, In.Desc.bytes());
  if (!E)
    return E.takeError();
  if (Error Err = D::send(Impl->Comm, D::resource(In.Data->data(), In.Data->size()), *E, Peer,
                          Impl->Stream.get()))
    return Err;
  return Impl->submitted(In, In);
}

Expected<Submission<HostValue>> LocalSession::receive(const CollectiveScope &Scope, size_t Peer,
                                                      const ValueDescriptor &Desc) {
  if (Error E = Impl->checkScope(Scope))
    return E;
  if (Error E = LocalSessionImpl::checkShape("receive", Desc))
    return E;
  HostValue Out = HostValue::zeros(Desc);
  Expected<D::Elems> E = D::elements(Desc.Type, Desc.bytes());
  if (!E)
    return E.takeError();
  if (Error Err = D::recv(Impl->Comm, D::resource(Out.Data->data(), Out.Data->size()), *E, Peer,
                          Impl->Stream.get()))
    return Err;
  return Impl->submitted(HostValue(), std::move(Out));
}

Expected<std::vector<uint32_t>> LocalSession::allGatherWords(ArrayRef<uint32_t> Local) {
  // Synchronous, on this thread: finish what is queued first.
  if (Error E = D::synchronize(Impl->Stream.get()))
    return E;
  return D::allGatherWords(Impl->Comm, Local);
}

} // namespace collc::rt
