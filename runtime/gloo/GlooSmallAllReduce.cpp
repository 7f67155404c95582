//===- runtime/gloo/GlooSmallAllReduce.cpp - Small all_reduces over Gloo ----===//

#include "runtime/gloo/GlooSmallAllReduce.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace collc::rt::gloo {

namespace {

using Buffer = std::unique_ptr<::gloo::transport::UnboundBuffer>;

/// Waits for \p Buf's recv (or send) with \p Peer, naming the peer in
/// \p Awaited meanwhile.
void await(const ExchangeGroup &G, Buffer &Buf, bool Recv, int Peer, int &Awaited) {
  Awaited = Peer;
  bool Done = Recv ? Buf->waitRecv(G.Timeout) : Buf->waitSend(G.Timeout);
  if (!Done)
    throw std::runtime_error(llvm::formatv("the {0} of an all_reduce exchange with rank {1} was "
                                           "aborted",
                                           Recv ? "recv" : "send", Peer)
                                 .str());
  Awaited = -1;
}

} // namespace

uint64_t smallAllReduceBytes(int Size) {
  if (Size <= 2)
    return SmallAllReduceMaxBytes; // doubling is never slower
  int Doubling = int(llvm::PowerOf2Floor(uint64_t(Size)));
  int Steps = int(llvm::Log2_32(uint32_t(Doubling))) + (Doubling != Size ? 2 : 0);
  double Ring = 2.0 * (Size - 1);
  double Crossover =
      double(AssumedLatencyBandwidth) * (Ring - Steps) / (double(Steps) - Ring / Size);
  return std::min<uint64_t>(SmallAllReduceMaxBytes, uint64_t(Crossover));
}

void recursiveDoublingAllReduce(const ExchangeGroup &G, const char *In, char *Data, uint64_t Count,
                                unsigned ElemBytes, PairReduce Fn, std::vector<char> &Scratch,
                                int &Awaited) {
  size_t Bytes = size_t(Count) * ElemBytes;
  if (In && In != Data && Bytes)
    std::memcpy(Data, In, Bytes);
  if (Scratch.size() < Bytes)
    Scratch.resize(Bytes);
  Buffer Mine = G.Ctx.createUnboundBuffer(Data, Bytes);
  Buffer Theirs = G.Ctx.createUnboundBuffer(Scratch.data(), Bytes);
  int Doubling = int(llvm::PowerOf2Floor(uint64_t(G.Size)));
  // The first 2 * Extra ranks fold in neighbours: 2i+1 hands its operand
  // to 2i and gets the result back. The Doubling ranks left, renumbered in
  // order (Virtual), each hold a run of consecutive ranks, so combining
  // the lower one first keeps rank order throughout.
  int Extra = G.Size - Doubling;
  bool Folded = G.Rank < 2 * Extra;
  if (Folded && G.Rank % 2 == 1) {
    int Partner = G.Rank - 1;
    Mine->send(Partner, G.Slot);
    await(G, Mine, /*Recv=*/false, Partner, Awaited);
    Mine->recv(Partner, G.Slot);
    await(G, Mine, /*Recv=*/true, Partner, Awaited);
    return;
  }
  if (Folded) {
    int Partner = G.Rank + 1;
    Theirs->recv(Partner, G.Slot);
    await(G, Theirs, /*Recv=*/true, Partner, Awaited);
    Fn(Data, Data, Scratch.data(), Count); // the lower rank's first
  }
  int Virtual = Folded ? G.Rank / 2 : G.Rank - Extra;
  auto RankOf = [&](int V) { return V < Extra ? 2 * V : V + Extra; };
  for (int Mask = 1; Mask < Doubling; Mask *= 2) {
    int Partner = RankOf(Virtual ^ Mask);
    // The recv first: Gloo sends an operand once the peer's recv is posted.
    Theirs->recv(Partner, G.Slot);
    Mine->send(Partner, G.Slot);
    await(G, Theirs, /*Recv=*/true, Partner, Awaited);
    // Data is overwritten below: its send must be done.
    await(G, Mine, /*Recv=*/false, Partner, Awaited);
    if (G.Rank < Partner)
      Fn(Data, Data, Scratch.data(), Count);
    else
      Fn(Data, Scratch.data(), Data, Count);
  }
  if (Folded) {
    int Partner = G.Rank + 1;
    Mine->send(Partner, G.Slot);
    await(G, Mine, /*Recv=*/false, Partner, Awaited);
  }
}

} // namespace collc::rt::gloo
