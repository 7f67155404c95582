//===- runtime/local/Shares.h - One rank's share of a collective -*- C++ -*-===//
//
// The algorithms of the local backend, apart from how its ranks meet: once
// every rank of a collective has arrived and each one's operands are
// pointers this thread may use, a rank does its share of the work here.
// The local backend's ranks are threads, whose operands are plain pointers;
// runtime/shm's are processes, whose operands are in shared memory mapped
// at other addresses in each process: both call these, so one collective
// computes the same bits on either.
//
// - all_reduce: rank r reduces its chunk (allReduceChunk: cache-line
//   aligned, so no two ranks write one line) from every rank's source, in
//   rank order, and writes it into every rank's destination (no staging
//   copy; non-temporal stores for large results, then storeFence()); or,
//   Whole, computes its own whole result (the small paths, from copies).
// - reduce_scatter: rank r reduces piece r of every source into its own
//   destination.
// - all_gather, broadcast, all_to_all, all_to_all_v: rank r copies from the
//   sources into its own destination.
//
// Only all_reduce (not Whole) writes another rank's memory.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_LOCAL_SHARES_H
#define COLLC_RUNTIME_LOCAL_SHARES_H

#include "ir/Types.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>

namespace collc::rt::local {

/// What a rendezvous does: a group collective of ir/Collectives.def (send
/// and recv use the channels instead), or Words, the all_gather of counts
/// that all_to_all_v needs first.
enum class OpCode : uint8_t {
#define COLLC_COLLECTIVE(Enum, ...) Enum,
#include "ir/Collectives.def"
  Words,
};
llvm::StringRef opCodeName(OpCode C);
/// The op codes there are (Words is the last).
constexpr unsigned NumOpCodes = unsigned(OpCode::Words) + 1;

/// What every rank of a collective must issue alike.
struct OpHeader {
  OpCode Code = OpCode::Barrier;
  ElemType Elem = ElemType::U8;
  ReduceOp Op = ReduceOp::Sum;
  double Scale = 1.0;
  uint64_t Count = 0;
  int64_t Root = -1;
};
/// How rank \p RB's \p B differs from rank \p RA's \p A ("rank 0 issues
/// all_reduce, rank 1 issues all_gather"), or "" when they are one
/// collective (all_to_all_v's counts are checked apart).
std::string opMismatch(const OpHeader &A, int RA, const OpHeader &B, int RB);

/// One collective as rank Rank sees it once every rank has arrived.
struct ShareView {
  /// The op; its Count in elements as the op defines them (per piece for
  /// reduce_scatter, all_gather and all_to_all; unused by all_to_all_v).
  OpHeader Head;
  int Ranks = 1, Rank = 0;
  /// Each rank's source and destination (Ranks of each).
  const char *const *Srcs = nullptr;
  char *const *Dsts = nullptr;
  /// Per rank, the elements between two pieces of its source
  /// (reduce_scatter, all_to_all); null: Head.Count.
  const uint64_t *SrcStrides = nullptr;
  /// The elements between two pieces of this rank's destination
  /// (all_gather, all_to_all); 0: Head.Count.
  uint64_t DstStride = 0;
  /// all_to_all_v: per rank, its elements to each rank (Ranks each), and
  /// this rank's from each.
  const uint64_t *const *SendCounts = nullptr;
  const uint64_t *RecvCounts = nullptr;
  /// all_to_all_v: the sources hold elements [WindowBegin, WindowEnd) of
  /// each rank's packed input (Srcs[q] points at element WindowBegin);
  /// this rank copies the part of each block that lies there.
  uint64_t WindowBegin = 0, WindowEnd = UINT64_MAX;
};

/// Does rank V.Rank's share (see the header comment). \p Whole: an
/// all_reduce computes this rank's whole result into its own destination
/// (nobody else's).
void runShare(const ShareView &V, bool Whole);

/// The elements [first, second) of an all_reduce of \p Count elements of
/// \p ElemBytes that rank \p R of \p N reduces: cache-line aligned.
std::pair<uint64_t, uint64_t> allReduceChunk(uint64_t Count, unsigned ElemBytes, int R, int N);

/// Bytes of input a rank brings to \p Code on \p Count elements of
/// \p ElemBytes in a group of \p N (what an inline copy must hold; 0 for
/// all_to_all_v, whose input the counts size, and barrier).
uint64_t shareInputBytes(OpCode Code, uint64_t Count, unsigned ElemBytes, int N);

} // namespace collc::rt::local

#endif
