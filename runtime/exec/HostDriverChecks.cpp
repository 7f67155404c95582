//===- runtime/exec/HostDriverChecks.cpp - Arguments of a host collective --===//

#include "runtime/exec/HostDriverChecks.h"

#include "ir/PremulFactor.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

namespace {

/// \p Count elements of \p Size bytes, \p Times over, for \p What; an
/// overflow is refused rather than wrapped into a small span. With the
/// compiler's overflow check, not llvm::checkedMulUnsigned: that goes
/// through APInt, out of line, on every collective's issue.
Expected<uint64_t> spanBytes(StringRef What, uint64_t Count, uint64_t Size, uint64_t Times = 1) {
  uint64_t Bytes;
  if (__builtin_mul_overflow(Count, Size, &Bytes) || __builtin_mul_overflow(Bytes, Times, &Bytes))
    return invalidArgument(formatv("{0}: {1} elements of {2} bytes, {3} times, overflow 64 bits",
                                   What, Count, Size, Times));
  return Bytes;
}

/// The executor names the element type twice (NCCL's drivers need it); the
/// two must agree.
Error checkSameType(StringRef What, ElemType Elements, ElemType T) {
  if (Elements == T)
    return Error::success();
  return invalidArgument(formatv("{0}: elements of {1} but element type {2}", What,
                                 elemTypeName(Elements), elemTypeName(T)));
}

/// \p What's source and destination hold \p SrcBytes and \p DstBytes.
/// Their names are built only for an error (a string per check would be
/// two allocations on every collective's issue).
Error checkSpans(StringRef What, const HostResource &Src, uint64_t SrcBytes,
                 const HostResource &Dst, uint64_t DstBytes) {
  if (Error Err = checkSpan(What + " source", Src, SrcBytes))
    return Err;
  return checkSpan(What + " destination", Dst, DstBytes);
}

/// The sum of \p Counts, refused on overflow.
Expected<uint64_t> total(StringRef What, ArrayRef<uint64_t> Counts) {
  uint64_t Sum = 0;
  for (uint64_t X : Counts)
    if (__builtin_add_overflow(Sum, X, &Sum))
      return invalidArgument(formatv("all_to_all_v: the {0} counts overflow 64 bits", What));
  return Sum;
}

} // namespace

Error invalidArgument(const Twine &Msg) { return makeError(ErrorKind::InvalidArgument, Msg); }

Error noCommunicatorError() {
  return invalidArgument("no communicator (this rank is not in the group)");
}

Error noStreamError() { return invalidArgument("no comm stream"); }

Error checkNothingPending(uint64_t Pending) {
  if (!Pending)
    return Error::success();
  return invalidArgument(
      "all_gather_words runs on the caller's thread: synchronize the comm stream first");
}

Error checkGroupName(const CommunicationId &Id) {
  if (Id.Name.empty())
    return invalidArgument("a communication id needs a name");
  return Error::success();
}

Error checkJoin(StringRef Backend, size_t MaxRanks, size_t Ranks, size_t Rank) {
  if (Ranks == 0 || Ranks > MaxRanks)
    return invalidArgument(formatv("{0} group has 1..{1} ranks, not {2}", Backend, MaxRanks, Ranks));
  if (Rank >= Ranks)
    return invalidArgument(formatv("rank {0} is not in 0..{1}", Rank, Ranks - 1));
  return Error::success();
}

Expected<HostElements> hostElements(ElemType T, uint64_t Bytes) {
  if (unsigned(T) >= NumElemTypes)
    return makeError(ErrorKind::Unsupported, formatv("unknown element type #{0}", unsigned(T)));
  unsigned Size = elemTypeBytes(T);
  if (Bytes % Size)
    return invalidArgument(formatv("{0} bytes are not whole {1} elements ({2} bytes each)", Bytes,
                                   elemTypeName(T), Size));
  return HostElements{T, Bytes / Size};
}

Error checkSpan(const Twine &What, const HostResource &R, uint64_t Need) {
  if (Need && !R.Data)
    return invalidArgument(formatv("{0} is null but must hold {1} bytes", What.str(), Need));
  if (R.Bytes < Need)
    return invalidArgument(
        formatv("{0} holds {1} bytes; the operation needs {2}", What.str(), R.Bytes, Need));
  return Error::success();
}

Error checkReduction(HostGroupView G, bool Scatter, const HostResource &Src,
                     const HostResource &Dst, HostElements E, ElemType T, ReduceOp Op,
                     double Scale) {
  StringRef What = Scatter ? "reduce_scatter" : "all_reduce";
  if (Error Err = checkSameType(What, E.Type, T))
    return Err;
  if (Op == ReduceOp::PremulSum)
    if (std::optional<std::string> Why = premulFactorProblem(T, Scale))
      return invalidArgument(What + ": " + *Why);
  Expected<uint64_t> Chunk = spanBytes(What, E.Count, elemTypeBytes(T));
  if (!Chunk)
    return Chunk.takeError();
  Expected<uint64_t> In = spanBytes(What, E.Count, elemTypeBytes(T), Scatter ? G.Size : 1);
  if (!In)
    return In.takeError();
  return checkSpans(What, Src, *In, Dst, *Chunk);
}

Error checkAllGather(HostGroupView G, const HostResource &Src, const HostResource &Dst,
                     HostElements E) {
  Expected<uint64_t> Out = spanBytes("all_gather", E.Count, elemTypeBytes(E.Type), G.Size);
  if (!Out)
    return Out.takeError();
  return checkSpans("all_gather", Src, E.Count * elemTypeBytes(E.Type), Dst, *Out);
}

Error checkBroadcast(HostGroupView G, const HostResource *Src, const HostResource &Dst,
                     HostElements E, size_t Root) {
  if (Root >= size_t(G.Size))
    return invalidArgument(formatv("broadcast root {0} is not in 0..{1}", Root, G.Size - 1));
  Expected<uint64_t> Bytes = spanBytes("broadcast", E.Count, elemTypeBytes(E.Type));
  if (!Bytes)
    return Bytes.takeError();
  bool IsRoot = Root == size_t(G.Rank);
  if (IsRoot && !Src)
    return invalidArgument(formatv("rank {0} is the broadcast root and needs a source", Root));
  if (!IsRoot && Src)
    return invalidArgument(formatv(
        "rank {0} is not the broadcast root ({1}); only the root has a source", G.Rank, Root));
  if (IsRoot)
    if (Error Err = checkSpan("broadcast source", *Src, *Bytes))
      return Err;
  return checkSpan("broadcast destination", Dst, *Bytes);
}

Error checkAllToAll(HostGroupView G, const HostResource &Src, const HostResource &Dst,
                    HostElements E, size_t Ranks) {
  if (Ranks != size_t(G.Size))
    return invalidArgument(
        formatv("all_to_all over {0} chunks in a group of {1} ranks", Ranks, G.Size));
  Expected<uint64_t> Bytes = spanBytes("all_to_all", E.Count, elemTypeBytes(E.Type), Ranks);
  if (!Bytes)
    return Bytes.takeError();
  return checkSpans("all_to_all", Src, *Bytes, Dst, *Bytes);
}

Expected<AllToAllVTotals> checkAllToAllV(HostGroupView G, const HostResource &Src,
                                         const HostResource &Dst, ElemType T,
                                         ArrayRef<uint64_t> SendCounts,
                                         ArrayRef<uint64_t> RecvCounts) {
  size_t N = size_t(G.Size);
  if (SendCounts.size() != N || RecvCounts.size() != N)
    return invalidArgument(formatv("all_to_all_v needs {0} send and receive counts, got {1} and {2}",
                                   N, SendCounts.size(), RecvCounts.size()));
  Expected<uint64_t> Sent = total("send", SendCounts);
  if (!Sent)
    return Sent.takeError();
  Expected<uint64_t> Received = total("receive", RecvCounts);
  if (!Received)
    return Received.takeError();
  Expected<uint64_t> In = spanBytes("all_to_all_v source", *Sent, elemTypeBytes(T));
  if (!In)
    return In.takeError();
  Expected<uint64_t> Out = spanBytes("all_to_all_v destination", *Received, elemTypeBytes(T));
  if (!Out)
    return Out.takeError();
  if (Error Err = checkSpans("all_to_all_v", Src, *In, Dst, *Out))
    return Err;
  return AllToAllVTotals{*Sent, *Received};
}

Error checkPointToPoint(HostGroupView G, bool Send, const HostResource &R, HostElements E,
                        size_t Peer) {
  StringRef What = Send ? "send" : "recv";
  if (Peer >= size_t(G.Size) || Peer == size_t(G.Rank))
    return invalidArgument(
        formatv("{0} peer {1} is not another rank in 0..{2}", What, Peer, G.Size - 1));
  Expected<uint64_t> Bytes = spanBytes(What, E.Count, elemTypeBytes(E.Type));
  if (!Bytes)
    return Bytes.takeError();
  return checkSpan(Send ? "send source" : "recv destination", R, *Bytes);
}

} // namespace collc::rt
