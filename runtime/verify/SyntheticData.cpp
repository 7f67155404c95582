//===- runtime/verify/SyntheticData.cpp - Deterministic tensor contents ----===//

#include "runtime/verify/SyntheticData.h"

#include "runtime/exec/ElementTraits.h"

#include <algorithm>
#include <cstring>

namespace collc::rt {

void syntheticElement(ElemType T, int64_t Rank, uint32_t Tensor, uint64_t I, char *Out) {
  // Values in [0.5, 2]: products over eight ranks stay far from overflow and
  // every value is exact even in fp8 e4m3 (three mantissa bits). The tensor
  // shifts the pattern (a factor prime to 13: two tensors mixed up, unless
  // 13 apart, differ at every element).
  uint64_t K = (uint64_t(Rank) * 7 + Tensor * 5 + I * 3) % 13;
  float F = 0.5f + 0.125f * float(K);
  int64_t N = int64_t((uint64_t(Rank) + Tensor + I) % 5) + 1;
  visitElemType(T, [&](auto E) {
    using Traits = decltype(E);
    using S = typename Traits::Storage;
    S V;
    if constexpr (Traits::IsFloat)
      V = Traits::store(typename Traits::Acc(F));
    else
      V = S(N);
    std::memcpy(Out, &V, sizeof(S));
  });
}

/// Split sizes (rows to each peer) that every sender can send and every
/// receiver can take: at most min(input rows, capacity) / peers each, varied
/// a little so ranks differ.
static bool fillCounts(const plan::Plan &P, uint32_t Tensor, int64_t Rank,
                       llvm::MutableArrayRef<char> Out) {
  for (const plan::Comm &C : P.Comms) {
    if (C.Kind != plan::CommKind::AllToAllV || C.Counts != int32_t(Tensor))
      continue;
    int64_t N = P.groupSize(C, Rank);
    if (N <= 0)
      N = 1;
    int64_t InRows = P.Tensors[C.Inputs[0]].Type.Shape[0];
    int64_t OutRows = P.Tensors[C.Outputs[0]].Type.Shape[0];
    int64_t Each = std::min(InRows, OutRows) / N;
    ElemType T = P.Tensors[Tensor].Type.Elem;
    unsigned Size = elemTypeBytes(T);
    for (int64_t J = 0; J != N && uint64_t(J * Size) < Out.size(); ++J) {
      int64_t V = std::max<int64_t>(0, Each - ((Rank + J) % 3));
      char Buf[8] = {};
      std::memcpy(Buf, &V, 8); // little endian: the low bytes are the value
      std::memcpy(Out.data() + J * Size, Buf, Size);
    }
    return true;
  }
  return false;
}

void fillSynthetic(const plan::Plan &P, uint32_t Tensor, int64_t Rank,
                   llvm::MutableArrayRef<char> Out) {
  if (fillCounts(P, Tensor, Rank, Out))
    return;
  ElemType T = P.Tensors[Tensor].Type.Elem;
  unsigned Size = elemTypeBytes(T);
  uint64_t N = Out.size() / Size;
  // The pattern repeats every 65 elements (13 x 5): write one period, then
  // copy it forward in doubling runs, at memory speed.
  uint64_t Period = std::min<uint64_t>(N, 65);
  for (uint64_t I = 0; I != Period; ++I)
    syntheticElement(T, Rank, Tensor, I, Out.data() + I * Size);
  uint64_t Done = Period;
  while (Done < N) {
    uint64_t Run = std::min(Done / Period * Period, N - Done);
    std::memcpy(Out.data() + Done * Size, Out.data(), Run * Size);
    Done += Run;
  }
}

} // namespace collc::rt
