//===- compiler/Shrink.cpp - Smaller tensors, same communication -----------===//

#include "compiler/Shrink.h"

#include "ir/TypeInference.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace llvm;

namespace collc {

static int64_t shrinkDim(int64_t D, int64_t Factor) { return std::max<int64_t>(1, D / Factor); }

static int64_t roundUp(int64_t X, int64_t M) { return (X + M - 1) / M * M; }

uint64_t communicatedBytesPerRank(const Program &P, int64_t Factor) {
  std::vector<uint8_t> Seen(P.numValues(), 0);
  uint64_t Total = 0;
  auto Add = [&](ValueId V) {
    if (Seen[V])
      return;
    Seen[V] = 1;
    const TensorType &T = P.value(V).Type;
    uint64_t Bytes = elemTypeBytes(T.Elem);
    for (int64_t D : T.Shape)
      Bytes *= uint64_t(shrinkDim(D, Factor));
    Total += Bytes;
  };
  for (const Op &O : P.ops()) {
    if (!isCommunication(O.Kind))
      continue;
    for (ValueId V : O.Operands)
      Add(V);
    for (ValueId V : O.Results)
      Add(V);
  }
  return Total;
}

Error shrinkProgram(Program &P, int64_t Factor) {
  if (Factor < 1)
    return createStringError(inconvertibleErrorCode(), "shrink factor %lld is not positive",
                             (long long)Factor);
  if (Factor == 1)
    return Error::success();
  auto &Ops = P.ops();
  for (const Op &O : Ops)
    if (O.Kind == OpKind::AllToAllV && !O.HasCountsOperand)
      return createStringError(inconvertibleErrorCode(),
                               "cannot shrink @%s: an all_to_all_v with static split sizes moves "
                               "a fixed number of rows (run it with --shrink 1)",
                               P.name().str().c_str());

  // What dimension 0 of each value must be a multiple of, from its uses
  // (later uses first, so requirements flow back through chains).
  std::vector<int64_t> Need(P.numValues(), 1);
  for (size_t I = Ops.size(); I-- > 0;) {
    const Op &O = Ops[I];
    if (!isCollective(O.Kind) || O.Kind == OpKind::AllToAllV || O.Kind == OpKind::Barrier)
      continue;
    int64_t N = std::max<int64_t>(1, P.group(O.Group).uniformSize());
    for (size_t K = 0; K != O.Results.size() && K != O.Operands.size(); ++K) {
      ValueId In = O.Operands[K], Out = O.Results[K];
      int64_t M = Need[Out], R = 1;
      switch (O.Kind) {
      case OpKind::ReduceScatter:
        R = N * M;
        break;
      case OpKind::AllToAll:
        R = std::lcm(N, M);
        break;
      case OpKind::AllGather:
        R = M / std::gcd(M, N);
        break;
      default:
        R = M;
        break;
      }
      Need[In] = std::lcm(Need[In], R);
    }
  }
  // One mapping per original size of dimension 0, so that values that must
  // agree (a send and its recv) still do.
  DenseMap<int64_t, int64_t> NeedByDim0;
  for (ValueId V = 0; V != P.numValues(); ++V)
    if (!P.value(V).Type.Shape.empty()) {
      int64_t &M = NeedByDim0[P.value(V).Type.Shape[0]];
      M = std::lcm(std::max<int64_t>(M, 1), Need[V]);
    }

  // Split sizes have one entry per group rank whatever the tensors' sizes.
  std::vector<uint8_t> IsCounts(P.numValues(), 0);
  for (const Op &O : Ops)
    if (O.HasCountsOperand)
      IsCounts[O.countsOperand()] = 1;

  // New types: written ones by the mapping, inferred ones from operands.
  for (Op &O : Ops) {
    if (hasInferredResultTypes(O.Kind)) {
      for (unsigned K = 0; K != O.Results.size(); ++K) {
        Expected<TensorType> T = inferResultType(P, O, K);
        if (!T)
          return createStringError(inconvertibleErrorCode(), "cannot shrink @%s by %lld: %s",
                                   P.name().str().c_str(), (long long)Factor,
                                   toString(T.takeError()).c_str());
        P.value(O.Results[K]).Type = *T;
      }
      continue;
    }
    for (ValueId V : O.Results) {
      if (IsCounts[V])
        continue;
      TensorType &T = P.value(V).Type;
      for (size_t D = 0; D != T.Shape.size(); ++D) {
        int64_t New = shrinkDim(T.Shape[D], Factor);
        if (D == 0)
          New = roundUp(New, NeedByDim0.lookup(T.Shape[0]) ? NeedByDim0.lookup(T.Shape[0]) : 1);
        T.Shape[D] = New;
      }
    }
  }
  return Error::success();
}

} // namespace collc
