//===- runtime/local/Kernels.cpp - Reductions and copies on the host -------===//
//
// Reductions work in blocks that stay in L1: the first source is loaded
// into an accumulator block, the others are combined into it in rank order,
// and the finished block is stored to every destination. The loops are
// simple enough for the compiler to vectorize; on x86 large results are
// written with non-temporal stores so the reduction moves no more memory
// than a copy (no read-for-ownership of destinations).
//
//===----------------------------------------------------------------------===//

#include "runtime/local/Kernels.h"

#include "runtime/exec/ElementTraits.h"
#include "runtime/exec/WrapArithmetic.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#define COLLC_HAVE_SSE2 1
#endif

namespace collc::rt::local {

void storeFence() {
#ifdef COLLC_HAVE_SSE2
  _mm_sfence();
#endif
}

void copyBytes(char *Dst, const char *Src, uint64_t Bytes, bool Streaming) {
  if (Dst == Src || Bytes == 0)
    return;
#ifdef COLLC_HAVE_SSE2
  if (Streaming && Bytes >= 256) {
    // Head until the destination is 16-byte aligned, then whole vectors.
    size_t Head = (16 - (reinterpret_cast<uintptr_t>(Dst) & 15)) & 15;
    std::memcpy(Dst, Src, Head);
    Dst += Head;
    Src += Head;
    Bytes -= Head;
    size_t Vecs = Bytes / 16;
    for (size_t I = 0; I != Vecs; ++I) {
      __m128i V = _mm_loadu_si128(reinterpret_cast<const __m128i *>(Src) + I);
      _mm_stream_si128(reinterpret_cast<__m128i *>(Dst) + I, V);
    }
    std::memcpy(Dst + Vecs * 16, Src + Vecs * 16, Bytes - Vecs * 16);
    return;
  }
#endif
  std::memcpy(Dst, Src, Bytes);
}

namespace {

/// \p T: the ElementTraits of the element type (runtime/exec/ElementTraits.h).
template <typename T>
void reduceTyped(ReduceOp Op, double Scale, const char *const *Srcs, unsigned N, uint64_t SrcOffset,
                 char *const *Dsts, unsigned NDsts, uint64_t DstOffset, uint64_t Count,
                 bool Streaming) {
  using S = typename T::Storage;
  using A = typename T::Acc;
  constexpr size_t Block = 512; // small frame: this path also serves tiny tails
  A Acc[Block];
  S Out[Block];
  A ScaleA = A(Scale);
  for (uint64_t Base = 0; Base < Count; Base += Block) {
    size_t Len = size_t(std::min<uint64_t>(Block, Count - Base));
    const S *First = reinterpret_cast<const S *>(Srcs[0]) + SrcOffset + Base;
    for (size_t I = 0; I != Len; ++I)
      Acc[I] = T::load(First[I]);
    if (Op == ReduceOp::PremulSum)
      for (size_t I = 0; I != Len; ++I)
        Acc[I] = mulWrap(Acc[I], ScaleA);
    for (unsigned R = 1; R < N; ++R) {
      const S *In = reinterpret_cast<const S *>(Srcs[R]) + SrcOffset + Base;
      switch (Op) {
      case ReduceOp::Sum:
      case ReduceOp::Avg:
        for (size_t I = 0; I != Len; ++I)
          Acc[I] = addWrap(Acc[I], T::load(In[I]));
        break;
      case ReduceOp::PremulSum:
        for (size_t I = 0; I != Len; ++I)
          Acc[I] = addWrap(Acc[I], mulWrap(T::load(In[I]), ScaleA));
        break;
      case ReduceOp::Prod:
        for (size_t I = 0; I != Len; ++I)
          Acc[I] = mulWrap(Acc[I], T::load(In[I]));
        break;
      case ReduceOp::Min:
        for (size_t I = 0; I != Len; ++I) {
          A V = T::load(In[I]);
          Acc[I] = V < Acc[I] ? V : Acc[I];
        }
        break;
      case ReduceOp::Max:
        for (size_t I = 0; I != Len; ++I) {
          A V = T::load(In[I]);
          Acc[I] = V > Acc[I] ? V : Acc[I];
        }
        break;
      }
    }
    if (Op == ReduceOp::Avg)
      for (size_t I = 0; I != Len; ++I)
        Acc[I] = averageOf(Acc[I], N);
    const char *Result;
    if constexpr (std::is_same_v<S, A>) {
      Result = reinterpret_cast<const char *>(Acc);
    } else {
      for (size_t I = 0; I != Len; ++I)
        Out[I] = T::store(Acc[I]);
      Result = reinterpret_cast<const char *>(Out);
    }
    for (unsigned D = 0; D != NDsts; ++D)
      copyBytes(Dsts[D] + (DstOffset + Base) * sizeof(S), Result, Len * sizeof(S), Streaming);
  }
}

} // namespace

void reduceInto(ElemType T, ReduceOp Op, double Scale, const char *const *Srcs, unsigned N,
                uint64_t SrcOffset, char *const *Dsts, unsigned NDsts, uint64_t DstOffset,
                uint64_t Count, bool Streaming) {
  if (Count == 0)
    return;
  uint64_t Done =
      reduceFast(T, Op, Scale, Srcs, N, SrcOffset, Dsts, NDsts, DstOffset, Count, Streaming);
  SrcOffset += Done;
  DstOffset += Done;
  Count -= Done;
  if (Count == 0)
    return;
  visitElemType(T, [&](auto E) {
    reduceTyped<decltype(E)>(Op, Scale, Srcs, N, SrcOffset, Dsts, NDsts, DstOffset, Count,
                             Streaming);
  });
}

} // namespace collc::rt::local
