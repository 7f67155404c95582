//===- runtime/gloo/GlooSmallAllReduce.h - Small all_reduces over Gloo -*- C++ -*-===//
//
// Gloo's ring allreduce takes 2(p-1) steps, and a step of a small operand
// costs a round of wake-ups (Gloo's loop thread, then the caller), not
// bytes. Below smallAllReduceBytes(p) the gloo backend reduces instead by
// recursive doubling over the group's own pairs (Gloo's unbound buffers on
// the TCP pairs of the context): log2(p) exchanges of the whole operand,
// two more where p is not a power of two (the first ranks fold in their
// odd neighbours first and hand them the result after). Measured on
// 2 cores (`collc bench --backend gloo`, a one-off build with the limit at
// 1 MiB so that every row from 16 B to 512 KiB took doubling): 0.48-0.67x
// the ring's time at 2 processes, 0.28-0.58x at 4 (docs/runtime.md).
//
// Invariant: every rank gets the same bits, combined in rank order. Each
// partial is a run of consecutive ranks, each exchange combines two with
// the lower run first, and both partners compute that same combination;
// so min and max ties keep the lowest rank's value, as the reference does,
// and with two ranks the result is the rank-ordered reference itself.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GLOOSMALLALLREDUCE_H
#define COLLC_RUNTIME_GLOO_GLOOSMALLALLREDUCE_H

#include "runtime/gloo/GlooReduction.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace gloo {
class Context;
} // namespace gloo

namespace collc::rt::gloo {

/// Doubling sends the whole operand each step, s = log2(d) steps for d the
/// largest power of two <= p, plus 2 (the fold and the hand-back) where
/// p != d; the ring takes 2(p-1) steps of an operand / p. With a step's
/// latency a and bandwidth b, doubling is quicker while
///   s (a + n/b) < 2(p-1) (a + n/(p b)),  i.e.  n < ab (2(p-1) - s) / (s - 2(p-1)/p):
/// always at 2, below 0.6ab at 3, 1.7ab at 5, 8ab at 4, 8.8ab at 8, 12ab
/// at 16. The limit takes ab as AssumedLatencyBandwidth, between 10 GbE's
/// (a ~30 us, b ~1.2 GB/s: ~36 KB) and this host's (a ~100 us, b ~1.1
/// GB/s: ~110 KB), and never more than SmallAllReduceMaxBytes.
constexpr uint64_t SmallAllReduceMaxBytes = 256 << 10;
constexpr uint64_t AssumedLatencyBandwidth = 64 << 10;

/// Wire operands of fewer bytes than this go by recursive doubling in a
/// group of \p Size; larger ones by Gloo's ring (38 KiB at 3, 256 KiB at 2
/// and 4).
uint64_t smallAllReduceBytes(int Size);

/// The group an exchange runs in: its Gloo context, this rank, the size,
/// the deadline of each wait, and the slot its messages use (none of
/// Gloo's collectives' slots, so a collective of Gloo's own on the same
/// context never takes them).
struct ExchangeGroup {
  ::gloo::Context &Ctx;
  int Rank, Size;
  std::chrono::milliseconds Timeout;
  uint64_t Slot;
};

/// Reduces \p Count elements of \p ElemBytes bytes each into \p Data, from
/// \p In (copied in first) or in place (\p In null or \p Data), over
/// \p G with \p Fn. \p Scratch receives the partners'
/// operands (grown as needed). While it waits for a peer, \p Awaited holds
/// that peer's rank (-1 otherwise), so that a timeout can name it. Gloo's
/// exceptions pass through; a wait that Gloo aborts throws one.
void recursiveDoublingAllReduce(const ExchangeGroup &G, const char *In, char *Data, uint64_t Count,
                                unsigned ElemBytes, PairReduce Fn, std::vector<char> &Scratch,
                                int &Awaited);

} // namespace collc::rt::gloo

#endif
