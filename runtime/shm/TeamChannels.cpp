//===- runtime/shm/TeamChannels.cpp - send and recv between a team's members ===//
//
// A message goes through the channel of its ordered pair in pieces of the
// channel's size: the sender writes a piece and posts it, the receiver
// copies it out and takes it, and the sender writes the next one after
// that. Each side counts its own pieces (the counters in the segment are
// only compared with them). The receiver checks the first piece's header
// against its own call: another size or type is refused on both sides, as
// on the local backend, and a piece that does not fit its place breaks the
// team (a corrupt peer).
//
//===----------------------------------------------------------------------===//

#include "runtime/shm/ShmTeam.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/local/Kernels.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstring>

using namespace llvm;
using namespace collc::rt::local;

namespace collc::rt::shm {

namespace {

std::string typeName(uint8_t T) {
  return T < NumElemTypes ? elemTypeName(ElemType(T)).str() : formatv("type #{0}", T).str();
}

} // namespace

Error ShmTeam::waitForPeer(function_ref<bool()> Ready, uint32_t Peer, const WaitPolicy &W,
                           function_ref<std::string()> What) {
  Expected<WaitOutcome> Outcome =
      waitOn(Ready, [&] { return SmallVector<uint32_t, 8>{Peer}; }, W);
  if (!Outcome)
    return Outcome.takeError();
  if (*Outcome == WaitOutcome::Ready)
    return Error::success();
  // A pair's wait breaks nothing else: the team's collectives go on.
  return makeError(ErrorKind::Timeout,
                   formatv("{0} of group '{1}' did not arrive at {2} within {3} ms",
                           memberName(Peer), Group, What(), W.Timeout.count()),
                   Members[Peer].GroupRank);
}

Error ShmTeam::send(uint32_t To, const char *Data, uint64_t Bytes, ElemType T,
                    const WaitPolicy &W) {
  if (header().FailState.load(std::memory_order_acquire) == 2)
    return brokenError(/*InFlight=*/false);
  ChannelHead &C = channel(Index, To);
  char *Buf = base() + Layout.channelData(Index, To);
  uint64_t Pieces = std::max<uint64_t>(1, divideCeil(Bytes, Layout.ChannelBytes));
  auto What = [&] { return formatv("a recv from {0}", memberName(Index)).str(); };
  auto Refused = [&]() -> Error {
    return makeError(ErrorKind::Mismatch,
                     formatv("{0} sent {1} bytes of {2} to {3}, which expected {4} bytes of {5}",
                             memberName(Index), Bytes, elemTypeName(T), memberName(To),
                             C.WantedBytes, typeName(C.WantedElem)),
                     Members[To].GroupRank);
  };
  uint64_t Mine = 0;
  for (uint64_t K = 0; K != Pieces; ++K) {
    // Counted once posted: a send refused half way leaves both sides'
    // counts equal, for the next message.
    Mine = SentPieces[To].load(std::memory_order_relaxed) + 1;
    if (K) {
      // The receiver took the last piece before this one is written.
      if (Error E = waitForPeer(
              [&] { return C.Taken.load(std::memory_order_acquire) >= Mine - 1; }, To, W, What))
        return E;
      if (C.Refused)
        return Refused();
    }
    uint64_t Len = std::min(Layout.ChannelBytes, Bytes - K * Layout.ChannelBytes);
    C.MessageBytes = Bytes;
    C.PieceBytes = Len;
    C.Elem = uint8_t(T);
    copyBytes(Buf, Data + K * Layout.ChannelBytes, Len, false);
    C.Posted.store(Mine, std::memory_order_release);
    SentPieces[To].store(Mine, std::memory_order_relaxed);
    ring(header().Bell, BellScope::Shared);
  }
  if (Error E = waitForPeer([&] { return C.Taken.load(std::memory_order_acquire) >= Mine; }, To,
                            W, What))
    return E;
  return C.Refused ? Refused() : Error::success();
}

Error ShmTeam::recv(uint32_t From, char *Data, uint64_t Bytes, ElemType T, const WaitPolicy &W) {
  if (header().FailState.load(std::memory_order_acquire) == 2)
    return brokenError(/*InFlight=*/false);
  ChannelHead &C = channel(From, Index);
  const char *Buf = base() + Layout.channelData(From, Index);
  uint64_t Pieces = std::max<uint64_t>(1, divideCeil(Bytes, Layout.ChannelBytes));
  auto What = [&] { return formatv("a send to {0}", memberName(Index)).str(); };
  for (uint64_t K = 0; K != Pieces; ++K) {
    uint64_t Mine = TakenPieces[From].load(std::memory_order_relaxed) + 1;
    if (Error E = waitForPeer(
            [&] { return C.Posted.load(std::memory_order_acquire) >= Mine; }, From, W, What))
      return E;
    // The header once; only the copy is used.
    uint64_t MessageBytes = C.MessageBytes, PieceBytes = C.PieceBytes;
    uint8_t Elem = C.Elem;
    auto Take = [&](bool Refuse) {
      C.Refused = Refuse;
      TakenPieces[From].store(Mine, std::memory_order_relaxed);
      C.Taken.store(Mine, std::memory_order_release);
      ring(header().Bell, BellScope::Shared);
    };
    if (K == 0 && (MessageBytes != Bytes || Elem != uint8_t(T))) {
      C.WantedBytes = Bytes;
      C.WantedElem = uint8_t(T);
      Take(/*Refuse=*/true);
      return makeError(ErrorKind::Mismatch,
                       formatv("{0} expected {1} bytes of {2} from {3}, which sent {4} bytes of "
                               "{5}",
                               memberName(Index), Bytes, elemTypeName(T), memberName(From),
                               MessageBytes, typeName(Elem)),
                       Members[From].GroupRank);
    }
    uint64_t Len = std::min(Layout.ChannelBytes, Bytes - K * Layout.ChannelBytes);
    if (PieceBytes != Len || MessageBytes != Bytes)
      return breakWith(makeError(ErrorKind::Backend,
                                 formatv("{0} posted piece {1} of a message to {2} as {3} bytes "
                                         "of a {4}-byte message; {5} of {6} were due (a corrupt "
                                         "peer)",
                                         memberName(From), K, memberName(Index), PieceBytes,
                                         MessageBytes, Len, Bytes),
                                 Members[From].GroupRank));
    copyBytes(Data + K * Layout.ChannelBytes, Buf, Len, false);
    Take(/*Refuse=*/false);
  }
  return Error::success();
}

} // namespace collc::rt::shm
