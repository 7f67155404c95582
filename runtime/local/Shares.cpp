//===- runtime/local/Shares.cpp - One rank's share of a collective ---------===//

#include "runtime/local/Shares.h"

#include "runtime/local/Kernels.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace collc::rt::local {

llvm::StringRef opCodeName(OpCode C) {
  switch (C) {
#define COLLC_COLLECTIVE(Enum, Spelling, ...)                                                     \
  case OpCode::Enum:                                                                               \
    return Spelling;
#include "ir/Collectives.def"
  case OpCode::Words:
    return "all_gather_words";
  }
  llvm_unreachable("bad op code");
}

std::string opMismatch(const OpHeader &A, int RA, const OpHeader &B, int RB) {
  if (A.Code != B.Code)
    return llvm::formatv("rank {0} issues {1}, rank {2} issues {3}", RA, opCodeName(A.Code), RB,
                         opCodeName(B.Code));
  if (A.Elem != B.Elem)
    return llvm::formatv("rank {0} has {1}, rank {2} has {3}", RA, elemTypeName(A.Elem), RB,
                         elemTypeName(B.Elem));
  if (A.Count != B.Count && A.Code != OpCode::AllToAllV)
    return llvm::formatv("rank {0} has {1} elements, rank {2} has {3}", RA, A.Count, RB, B.Count);
  if (A.Op != B.Op || A.Scale != B.Scale)
    return llvm::formatv("rank {0} reduces with {1}, rank {2} with {3}", RA, reduceOpName(A.Op),
                         RB, reduceOpName(B.Op));
  if (A.Root != B.Root)
    return llvm::formatv("rank {0} has root {1}, rank {2} has root {3}", RA, A.Root, RB, B.Root);
  return "";
}

std::pair<uint64_t, uint64_t> allReduceChunk(uint64_t Count, unsigned ElemBytes, int R, int N) {
  // Chunks on cache-line boundaries so no two ranks write one line.
  uint64_t Line = std::max<uint64_t>(1, 64 / ElemBytes);
  uint64_t Lines = (Count + Line - 1) / Line;
  uint64_t Begin = std::min(Count, Lines * uint64_t(R) / uint64_t(N) * Line);
  uint64_t End = std::min(Count, Lines * uint64_t(R + 1) / uint64_t(N) * Line);
  return {Begin, End};
}

uint64_t shareInputBytes(OpCode Code, uint64_t Count, unsigned ElemBytes, int N) {
  switch (Code) {
  case OpCode::ReduceScatter:
  case OpCode::AllToAll:
    return Count * ElemBytes * uint64_t(N);
  case OpCode::AllToAllV:
  case OpCode::Barrier:
    return 0;
  default:
    return Count * ElemBytes;
  }
}

void runShare(const ShareView &V, bool Whole) {
  int N = V.Ranks, R = V.Rank;
  const OpHeader &H = V.Head;
  unsigned Size = elemTypeBytes(H.Elem);
  uint64_t Piece = H.Count * Size;
  uint64_t DstStride = (V.DstStride ? V.DstStride : H.Count) * Size;
  auto SrcStride = [&](int Q) { return (V.SrcStrides ? V.SrcStrides[Q] : H.Count) * Size; };
  char *Out = V.Dsts[R];
  switch (H.Code) {
  case OpCode::AllReduce: {
    if (Whole) {
      reduceInto(H.Elem, H.Op, H.Scale, V.Srcs, N, 0, &Out, 1, 0, H.Count, false);
      break;
    }
    auto [Begin, End] = allReduceChunk(H.Count, Size, R, N);
    bool Streaming = (End - Begin) * Size * N >= StreamingThreshold;
    reduceInto(H.Elem, H.Op, H.Scale, V.Srcs, N, Begin, V.Dsts, N, Begin, End - Begin, Streaming);
    break;
  }
  case OpCode::ReduceScatter: {
    // Piece R of every source.
    llvm::SmallVector<const char *, 16> Pieces;
    for (int Q = 0; Q != N; ++Q)
      Pieces.push_back(V.Srcs[Q] + uint64_t(R) * SrcStride(Q));
    reduceInto(H.Elem, H.Op, H.Scale, Pieces.data(), N, 0, &Out, 1, 0, H.Count, false);
    break;
  }
  case OpCode::AllGather:
  case OpCode::Words:
    for (int Q = 0; Q != N; ++Q)
      copyBytes(Out + uint64_t(Q) * DstStride, V.Srcs[Q], Piece, false);
    break;
  case OpCode::Broadcast:
    copyBytes(Out, V.Srcs[H.Root], Piece, false);
    break;
  case OpCode::AllToAll:
    for (int Q = 0; Q != N; ++Q)
      copyBytes(Out + uint64_t(Q) * DstStride, V.Srcs[Q] + uint64_t(R) * SrcStride(Q), Piece,
                false);
    break;
  case OpCode::AllToAllV: {
    uint64_t RecvOffset = 0;
    for (int Q = 0; Q != N; ++Q) {
      const uint64_t *Sends = V.SendCounts[Q];
      uint64_t SendOffset = 0;
      for (int K = 0; K != R; ++K)
        SendOffset += Sends[K];
      // The part of Q's block for this rank that lies in the window.
      uint64_t First = std::max(SendOffset, V.WindowBegin);
      uint64_t Last = std::min(SendOffset + Sends[R], V.WindowEnd);
      if (First < Last)
        copyBytes(Out + (RecvOffset + First - SendOffset) * Size,
                  V.Srcs[Q] + (First - V.WindowBegin) * Size, (Last - First) * Size, false);
      RecvOffset += V.RecvCounts[Q];
    }
    break;
  }
  case OpCode::Barrier:
    break;
  }
}

} // namespace collc::rt::local
