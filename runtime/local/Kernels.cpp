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

#include "runtime/exec/ElementConversion.h"
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

/// Storage type S, accumulator type A, and the conversions between them.
template <typename S, typename A> struct Plain {
  using Storage = S;
  using Acc = A;
  static A load(S V) { return A(V); }
  static S store(A V) { return S(V); }
};
struct Half {
  using Storage = uint16_t;
  using Acc = float;
  static float load(uint16_t V) { return halfToFloat(V); }
  static uint16_t store(float V) { return floatToHalf(V); }
};
struct BF16 {
  using Storage = uint16_t;
  using Acc = float;
  static float load(uint16_t V) { return bf16ToFloat(V); }
  static uint16_t store(float V) { return floatToBf16(V); }
};
struct E4M3 {
  using Storage = uint8_t;
  using Acc = float;
  static float load(uint8_t V) { return e4m3ToFloat(V); }
  static uint8_t store(float V) { return floatToE4m3(V); }
};
struct E5M2 {
  using Storage = uint8_t;
  using Acc = float;
  static float load(uint8_t V) { return e5m2ToFloat(V); }
  static uint8_t store(float V) { return floatToE5m2(V); }
};

using F32T = Plain<float, float>;
using F64T = Plain<double, double>;
using I8T = Plain<int8_t, int8_t>;
using U8T = Plain<uint8_t, uint8_t>;
using I32T = Plain<int32_t, int32_t>;
using U32T = Plain<uint32_t, uint32_t>;
using I64T = Plain<int64_t, int64_t>;
using U64T = Plain<uint64_t, uint64_t>;

/// \p KeepAcc: the results stay in the accumulator type (f32 for the
/// narrow floats), unrounded, and DstOffset counts accumulators.
template <typename T, bool KeepAcc = false>
void reduceTyped(ReduceOp Op, double Scale, const char *const *Srcs, unsigned N, uint64_t SrcOffset,
                 char *const *Dsts, unsigned NDsts, uint64_t DstOffset, uint64_t Count,
                 bool Streaming) {
  using S = typename T::Storage;
  using A = typename T::Acc;
  using O = std::conditional_t<KeepAcc, A, S>;
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
    if constexpr (std::is_same_v<O, A>) {
      Result = reinterpret_cast<const char *>(Acc);
    } else {
      for (size_t I = 0; I != Len; ++I)
        Out[I] = T::store(Acc[I]);
      Result = reinterpret_cast<const char *>(Out);
    }
    for (unsigned D = 0; D != NDsts; ++D)
      copyBytes(Dsts[D] + (DstOffset + Base) * sizeof(O), Result, Len * sizeof(O), Streaming);
  }
}

/// Calls \p Fn with a value of the traits of \p T (the one map from an
/// element type to its storage and accumulator).
template <typename F> void withTraits(ElemType T, F Fn) {
  switch (T) {
  case ElemType::F32:
    return Fn(F32T());
  case ElemType::F64:
    return Fn(F64T());
  case ElemType::F16:
    return Fn(Half());
  case ElemType::BF16:
    return Fn(BF16());
  case ElemType::F8E4M3:
    return Fn(E4M3());
  case ElemType::F8E5M2:
    return Fn(E5M2());
  case ElemType::I8:
    return Fn(I8T());
  case ElemType::U8:
    return Fn(U8T());
  case ElemType::I32:
    return Fn(I32T());
  case ElemType::U32:
    return Fn(U32T());
  case ElemType::I64:
    return Fn(I64T());
  case ElemType::U64:
    return Fn(U64T());
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
  withTraits(T, [&](auto Traits) {
    reduceTyped<decltype(Traits)>(Op, Scale, Srcs, N, SrcOffset, Dsts, NDsts, DstOffset, Count,
                                  Streaming);
  });
}

bool accumulatesWider(ElemType T) {
  bool Wider = false;
  withTraits(T, [&](auto Traits) {
    using Tr = decltype(Traits);
    Wider = !std::is_same_v<typename Tr::Storage, typename Tr::Acc>;
  });
  return Wider;
}

void reduceWidened(ElemType T, ReduceOp Op, double Scale, const char *const *Srcs, unsigned N,
                   uint64_t SrcOffset, float *Out, uint64_t Count) {
  char *Dst = reinterpret_cast<char *>(Out);
  withTraits(T, [&](auto Traits) {
    using Tr = decltype(Traits);
    if constexpr (std::is_same_v<typename Tr::Acc, float> &&
                  !std::is_same_v<typename Tr::Storage, float>)
      reduceTyped<Tr, /*KeepAcc=*/true>(Op, Scale, Srcs, N, SrcOffset, &Dst, 1, 0, Count, false);
  });
}

void narrowFrom(ElemType T, const float *In, char *Out, uint64_t Count) {
  withTraits(T, [&](auto Traits) {
    using Tr = decltype(Traits);
    using S = typename Tr::Storage;
    if constexpr (std::is_same_v<typename Tr::Acc, float> && !std::is_same_v<S, float>)
      for (uint64_t I = 0; I != Count; ++I) {
        S V = Tr::store(In[I]);
        std::memcpy(Out + I * sizeof(S), &V, sizeof(S));
      }
  });
}

void divideInPlace(ElemType T, char *Data, uint64_t Count, unsigned N) {
  withTraits(T, [&](auto Traits) {
    using Tr = decltype(Traits);
    using S = typename Tr::Storage;
    for (uint64_t I = 0; I != Count; ++I) {
      S V;
      std::memcpy(&V, Data + I * sizeof(S), sizeof(S));
      V = Tr::store(averageOf(Tr::load(V), N));
      std::memcpy(Data + I * sizeof(S), &V, sizeof(S));
    }
  });
}

} // namespace collc::rt::local
