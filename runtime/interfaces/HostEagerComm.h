//===- runtime/interfaces/HostEagerComm.h - EagerComm over any host driver -*- C++ -*-===//
//
// The EagerComm adapter (EagerComm.h), written once over a driver whose
// memory is the host's and whose comm stream is a HostStream (local, mpi,
// gloo): every call checks through the driver, enqueues on its stream and
// kicks it, so the work progresses while the caller goes on. Collectives
// share stream 0; a send or recv goes on the stream of its peer and
// direction, made on first use. Backends instantiate it through
// createHostEagerComm (runtime/gloo/GlooAdapters.h, ...).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_INTERFACES_HOSTEAGERCOMM_H
#define COLLC_RUNTIME_INTERFACES_HOSTEAGERCOMM_H

#include "runtime/exec/GroupJoin.h"
#include "runtime/interfaces/EagerComm.h"
#include "runtime/interfaces/HostSession.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace collc::rt {

/// \p Count elements of \p T (or times \p Ranks) in bytes, or an error
/// naming \p What when that overflows.
llvm::Expected<uint64_t> eagerBytes(llvm::StringRef What, ElemType T, uint64_t Count,
                                    uint64_t Ranks = 1);
/// The sum of \p Counts elements of \p T in bytes, or an error naming
/// \p What when that overflows.
llvm::Expected<uint64_t> eagerTotalBytes(llvm::StringRef What, ElemType T,
                                         llvm::ArrayRef<uint64_t> Counts);
/// The error of a wait that \p Within ended before ticket \p T ran.
llvm::Error eagerStillPending(EagerTicket T, std::chrono::milliseconds Within);

template <HostDriver D> class HostEagerComm final : public EagerComm {
public:
  /// This process is rank \p Rank of \p Size in the group named \p Name;
  /// every wait is bounded by \p Timeout.
  static llvm::Expected<std::unique_ptr<EagerComm>>
  create(llvm::StringRef Name, size_t Size, size_t Rank, std::chrono::milliseconds Timeout) {
    llvm::Expected<typename D::Communicator> C = joinGroup<D>(Name, Size, Rank, Timeout);
    if (!C)
      return C.takeError();
    return std::unique_ptr<EagerComm>(new HostEagerComm(*C, Size, Rank, Name.str()));
  }

  ~HostEagerComm() override {
    // What is still queued runs before its streams go.
    for (typename D::StreamOwner &S : Streams)
      llvm::consumeError(D::synchronize(D::streamOf(S)));
  }

  size_t rank() const override { return Rank; }
  size_t size() const override { return Size; }
  llvm::StringRef backend() const override { return D::name(); }

  llvm::Expected<EagerTicket> allReduce(ReduceOp Op, ElemType T, void *Data,
                                        uint64_t Count) override {
    if (llvm::Error E = checkOp(Op))
      return E;
    llvm::Expected<uint64_t> Bytes = eagerBytes("all_reduce", T, Count);
    if (!Bytes)
      return Bytes.takeError();
    auto E = D::elements(T, *Bytes);
    if (!E)
      return E.takeError();
    auto R = D::resource(Data, *Bytes);
    return issue(0, [&](typename D::CommStream S) { return D::allReduce(Comm, R, R, *E, Op, S); });
  }

  llvm::Expected<EagerTicket> broadcast(void *Data, uint64_t Bytes, size_t Root) override {
    auto E = D::elements(ElemType::U8, Bytes);
    if (!E)
      return E.takeError();
    auto R = D::resource(Data, Bytes);
    return issue(0, [&](typename D::CommStream S) {
      return D::broadcast(Comm, Root == Rank ? &R : nullptr, R, *E, Root, S);
    });
  }

  llvm::Expected<EagerTicket> allGather(const void *In, void *Out, uint64_t Bytes) override {
    llvm::Expected<uint64_t> All = eagerBytes("all_gather", ElemType::U8, Bytes, Size);
    if (!All)
      return All.takeError();
    auto E = D::elements(ElemType::U8, Bytes);
    if (!E)
      return E.takeError();
    return issue(0, [&](typename D::CommStream S) {
      return D::allGather(Comm, D::resource(const_cast<void *>(In), Bytes), D::resource(Out, *All),
                          *E, S);
    });
  }

  llvm::Expected<EagerTicket> reduceScatter(ReduceOp Op, ElemType T, const void *In, void *Out,
                                            uint64_t Count) override {
    if (llvm::Error E = checkOp(Op))
      return E;
    llvm::Expected<uint64_t> Mine = eagerBytes("reduce_scatter", T, Count);
    if (!Mine)
      return Mine.takeError();
    llvm::Expected<uint64_t> All = eagerBytes("reduce_scatter", T, Count, Size);
    if (!All)
      return All.takeError();
    auto E = D::elements(T, *Mine);
    if (!E)
      return E.takeError();
    return issue(0, [&](typename D::CommStream S) {
      return D::reduceScatter(Comm, D::resource(const_cast<void *>(In), *All),
                              D::resource(Out, *Mine), *E, Op, S);
    });
  }

  llvm::Expected<EagerTicket> allToAllV(ElemType T, const void *In, void *Out,
                                        llvm::ArrayRef<uint64_t> SendCounts,
                                        llvm::ArrayRef<uint64_t> RecvCounts) override {
    if (SendCounts.size() != Size || RecvCounts.size() != Size)
      return makeError(ErrorKind::InvalidArgument,
                       llvm::formatv("all_to_all: {0} send and {1} recv counts for {2} ranks: "
                                     "expected one of each per rank",
                                     SendCounts.size(), RecvCounts.size(), Size));
    llvm::Expected<uint64_t> SendBytes = eagerTotalBytes("all_to_all's send", T, SendCounts);
    if (!SendBytes)
      return SendBytes.takeError();
    llvm::Expected<uint64_t> RecvBytes = eagerTotalBytes("all_to_all's recv", T, RecvCounts);
    if (!RecvBytes)
      return RecvBytes.takeError();
    return issue(0, [&](typename D::CommStream S) {
      return D::allToAllV(Comm, D::resource(const_cast<void *>(In), *SendBytes),
                          D::resource(Out, *RecvBytes), T, SendCounts, RecvCounts, S);
    });
  }

  llvm::Expected<EagerTicket> send(const void *Data, uint64_t Bytes, size_t Peer) override {
    return pointToPoint(const_cast<void *>(Data), Bytes, Peer, /*Send=*/true);
  }

  llvm::Expected<EagerTicket> recv(void *Data, uint64_t Bytes, size_t Peer) override {
    return pointToPoint(Data, Bytes, Peer, /*Send=*/false);
  }

  llvm::Expected<EagerTicket> barrier() override {
    return issue(0, [&](typename D::CommStream S) { return D::barrier(Comm, S); });
  }

  llvm::Error wait(EagerTicket T, std::optional<std::chrono::milliseconds> Within) override {
    llvm::Expected<typename D::CommStream> S = streamAt(T);
    if (!S)
      return S.takeError();
    if (Within) {
      auto Deadline = std::chrono::steady_clock::now() + *Within;
      for (auto Pause = std::chrono::microseconds(50); !(*S)->done(T.Value);
           Pause = std::min(Pause * 2, std::chrono::microseconds(10000))) {
        if (std::chrono::steady_clock::now() >= Deadline)
          return eagerStillPending(T, *Within);
        std::this_thread::sleep_for(Pause);
      }
    }
    return D::waitFor(*S, T.Value);
  }

  bool done(EagerTicket T) const override {
    llvm::Expected<typename D::CommStream> S = streamAt(T);
    if (!S) {
      llvm::consumeError(S.takeError());
      return false;
    }
    return (*S)->done(T.Value);
  }

  llvm::Error health() const override { return D::health(Comm); }

private:
  HostEagerComm(typename D::Communicator Comm, size_t Size, size_t Rank, std::string Name)
      : Comm(std::move(Comm)), Size(Size), Rank(Rank), Name(std::move(Name)) {
    Streams.push_back(D::createStream(this->Name + ".collectives"));
  }

  /// Premultiplied sums need their factor, which this interface has not.
  llvm::Error checkOp(ReduceOp Op) const {
    if (Op != ReduceOp::PremulSum)
      return llvm::Error::success();
    return makeError(ErrorKind::Unsupported,
                     "premul_sum needs a factor, which eager collectives do not take: expected "
                     "sum, prod, min, max or avg");
  }

  /// Enqueues what \p Enqueue enqueues on stream \p Index and kicks it.
  template <typename Fn> llvm::Expected<EagerTicket> issue(uint32_t Index, Fn &&Enqueue) {
    std::lock_guard<std::mutex> L(M);
    typename D::CommStream S = D::streamOf(Streams[Index]);
    if (llvm::Error E = Enqueue(S))
      return E;
    EagerTicket T{Index, D::record(S)};
    D::flush(S);
    return T;
  }

  llvm::Expected<EagerTicket> pointToPoint(void *Data, uint64_t Bytes, size_t Peer, bool Send) {
    auto E = D::elements(ElemType::U8, Bytes);
    if (!E)
      return E.takeError();
    uint32_t Index;
    {
      std::lock_guard<std::mutex> L(M);
      auto [It, New] = PeerStreams.try_emplace({Peer, Send}, uint32_t(Streams.size()));
      if (New)
        Streams.push_back(D::createStream(
            llvm::formatv("{0}.{1}.{2}", Name, Send ? "send" : "recv", Peer).str()));
      Index = It->second;
    }
    auto R = D::resource(Data, Bytes);
    return issue(Index, [&](typename D::CommStream S) {
      return Send ? D::send(Comm, R, *E, Peer, S) : D::recv(Comm, R, *E, Peer, S);
    });
  }

  llvm::Expected<typename D::CommStream> streamAt(EagerTicket T) const {
    std::lock_guard<std::mutex> L(M);
    if (T.Stream >= Streams.size() || T.Value == 0)
      return makeError(
          ErrorKind::InvalidArgument,
          llvm::formatv("ticket {0}.{1} was not issued by this communicator", T.Stream, T.Value));
    return D::streamOf(Streams[T.Stream]);
  }

  typename D::Communicator Comm;
  size_t Size, Rank;
  std::string Name;
  /// Guards Streams and PeerStreams (a process group issues from several
  /// threads); a stream, once made, stays where it is.
  mutable std::mutex M;
  std::vector<typename D::StreamOwner> Streams;
  /// (peer, is a send) -> its stream's index, in order of first use.
  std::map<std::pair<size_t, bool>, uint32_t> PeerStreams;
};

/// This process's EagerComm in group \p Name on driver \p D.
template <HostDriver D>
llvm::Expected<std::unique_ptr<EagerComm>> createHostEagerComm(llvm::StringRef Name, size_t Size,
                                                               size_t Rank,
                                                               std::chrono::milliseconds Timeout) {
  return HostEagerComm<D>::create(Name, Size, Rank, Timeout);
}

} // namespace collc::rt

#endif
