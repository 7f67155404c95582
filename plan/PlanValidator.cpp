//===- plan/PlanValidator.cpp - A plan is input: check it ---------===//
//
// One pass over the plan in the file's order: header, groups, tensors,
// buffers, computes, comms, steps. Each part may rely on the ones checked
// before it (a comm's tensors have checked byte sizes, its group has
// disjoint subgroups). The first failure is returned; membership is
// computed here rather than read from Plan::finalize's derived fields, so a
// plan edited in memory is judged by what it says.
//
//===----------------------------------------------------------------------===//

#include "plan/PlanValidator.h"

#include "ir/PremulFactor.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace llvm;

namespace collc::plan {

namespace {

class Validator {
public:
  Validator(const Plan &P, StringRef Name) : P(P), Name(Name) {}
  Error run();

private:
  Error fail(const Twine &Entity, const Twine &Msg) const {
    return createStringError(inconvertibleErrorCode(), "%s: %s: %s", Name.str().c_str(),
                             Entity.str().c_str(), Msg.str().c_str());
  }
  // Named for every entity checked, failing or not: plain concatenation,
  // not formatv, keeps validation a small part of compiling a large plan.
  std::string commName(size_t I) const {
    return "comm " + std::to_string(I) + " (" + commKindName(P.Comms[I].Kind).str() + ")";
  }
  /// A joint comm's further side is named as such; side 0 is the comm.
  std::string sideName(size_t I, size_t K) const {
    return K ? commName(I) + " side " + std::to_string(K) : commName(I);
  }
  Error header();
  Error groups();
  Error tensors();
  Error buffers();
  Error rankSet(const Twine &Entity, const RankSet &S) const;
  Error tensorList(const Twine &Entity, StringRef What, ArrayRef<uint32_t> Ts) const;
  Error computes();
  /// Side \p K of comm \p I: its ranks, tensors, buffers; a joint comm's
  /// further sides are of a collective and keep to their own ranks.
  Error side(size_t I, size_t K);
  Error comm(size_t I);
  /// Peers and roots, fenced, p2p batches: what holds for every side.
  Error commFlags(size_t I);
  Error commShape(size_t I, size_t K, int64_t N);
  Error allToAllV(size_t I, size_t K, int64_t N);
  Error bufferOf(size_t I, int32_t B, StringRef What, ArrayRef<uint32_t> Ts, SlotMode Copied);
  std::string producerOf(uint32_t T) const;
  /// Per buffer, (tensor, slot index) sorted by tensor; see bufferOf.
  std::vector<std::vector<std::pair<uint32_t, size_t>>> SlotTensors;
  int64_t LastBatch = -1; ///< the highest p2p batch of the comms so far
  /// The steps in order: what each reads is there, each comm side launched
  /// once and waited for, p2p batches kept together (StepWalk).
  Error steps();
  class StepWalk;

  /// Calls \p F on every rank of \p S (the world when All), until it fails.
  template <typename F> Error forRanks(const RankSet &S, F Fn) const {
    if (S.All) {
      for (int64_t R = 0; R != P.World; ++R)
        if (Error E = Fn(R))
          return E;
      return Error::success();
    }
    for (int32_t R : S.Ranks)
      if (Error E = Fn(R))
        return E;
    return Error::success();
  }
  /// Calls \p F on every rank that issues \p C, side by side.
  template <typename F> Error forIssuers(const Comm &C, F Fn) const {
    for (size_t K = 0; K != C.numSides(); ++K)
      if (Error E = forRanks(C.side(K).Ranks, Fn))
        return E;
    return Error::success();
  }
  /// The subgroup of world rank \p R in group \p G, or -1.
  int32_t subgroupOf(int32_t G, int64_t R) const { return SubgroupOf[G][R]; }

  const Plan &P;
  StringRef Name;
  std::vector<std::vector<int32_t>> SubgroupOf; ///< per group, per world rank
  std::vector<uint64_t> Bytes;                  ///< per tensor, checked
};

Error Validator::header() {
  if (P.Version < OldestFormatVersion || P.Version > FormatVersion)
    return fail("program @" + P.Program,
                formatv("format version {0} is not in {1}..{2}", P.Version, OldestFormatVersion,
                        FormatVersion)
                    .str());
  if (P.Version < requiredVersion(P))
    return fail("program @" + P.Program,
                formatv("format version {0}, but it has a joint comm or a step that names its "
                        "ranks, which need version {1}",
                        P.Version, requiredVersion(P))
                    .str());
  if (P.World < 1 || P.World > MaxWorld)
    return fail("program @" + P.Program,
                formatv("world {0} is not in 1..{1}", P.World, MaxWorld).str());
  if (P.Alignment == 0 || P.Alignment > uint64_t(MaxAlignment) ||
      (P.Alignment & (P.Alignment - 1)))
    return fail("program @" + P.Program,
                formatv("alignment {0}: expected a power of two in 1..{1}", P.Alignment,
                        MaxAlignment)
                    .str());
  return Error::success();
}

Error Validator::groups() {
  SubgroupOf.reserve(P.Groups.size());
  for (const Group &G : P.Groups) {
    std::vector<int32_t> Of(P.World, -1);
    for (size_t S = 0; S != G.Subgroups.size(); ++S) {
      if (G.Subgroups[S].empty())
        return fail("group @" + G.Name, formatv("subgroup {0} is empty", S).str());
      for (int32_t R : G.Subgroups[S]) {
        if (R < 0 || R >= P.World)
          return fail("group @" + G.Name,
                      formatv("rank {0} is not in 0..{1}", R, P.World - 1).str());
        if (Of[R] >= 0)
          return fail("group @" + G.Name,
                      formatv("rank {0} is in subgroups {1} and {2}; subgroups must be disjoint",
                              R, Of[R], S)
                          .str());
        Of[R] = int32_t(S);
      }
    }
    SubgroupOf.push_back(std::move(Of));
  }
  return Error::success();
}

Error Validator::tensors() {
  Bytes.reserve(P.Tensors.size());
  for (size_t I = 0; I != P.Tensors.size(); ++I) {
    const Tensor &T = P.Tensors[I];
    std::string Entity = "tensor " + std::to_string(I) + " %" + T.Name;
    // A binding names a tensor as %g0 or g0 (tensorName drops one '%'): a
    // name that is empty or begins with '%' could not be bound.
    if (T.Name.empty() || T.Name.front() == '%')
      return fail(Entity, "its name is empty or begins with '%': expected a name such as %g0");
    int64_t N = 1;
    for (int64_t D : T.Type.Shape) {
      if (D < 0 || D > MaxDimension)
        return fail(Entity, formatv("dimension {0} is not in 0..2^48", D).str());
      Optional<int64_t> M = checkedMul(N, D);
      if (!M)
        return fail(Entity, T.Type.str() + " has more than 2^63-1 elements");
      N = *M;
    }
    Optional<int64_t> B = checkedMul(N, int64_t(elemTypeBytes(T.Type.Elem)));
    if (!B)
      return fail(Entity, T.Type.str() + " has more than 2^63-1 bytes");
    Bytes.push_back(uint64_t(*B));
  }
  return Error::success();
}

Error Validator::buffers() {
  for (size_t I = 0; I != P.Buffers.size(); ++I) {
    const Buffer &B = P.Buffers[I];
    std::string Entity = "buffer " + std::to_string(I);
    if (B.Segments < 1 || B.Segments > P.World)
      return fail(Entity, formatv("segments {0} is not in 1..{1}", B.Segments, P.World).str());
    if (B.Bytes > uint64_t(INT64_MAX) || B.Bytes % uint64_t(B.Segments))
      return fail(Entity, formatv("{0} bytes do not split into {1} equal segments", B.Bytes,
                                  B.Segments)
                              .str());
    uint64_t Segment = B.Bytes / uint64_t(B.Segments);
    for (const Slot &S : B.Slots) {
      if (S.Tensor >= P.Tensors.size())
        return fail(Entity, formatv("slot of tensor {0}: there are {1} tensors", S.Tensor,
                                    P.Tensors.size())
                                .str());
      std::string SlotName = "slot of %" + P.Tensors[S.Tensor].Name;
      if (S.Bytes != Bytes[S.Tensor])
        return fail(Entity, formatv("{0} has {1} bytes; the tensor has {2}", SlotName, S.Bytes,
                                    Bytes[S.Tensor])
                                .str());
      if (S.Bytes % uint64_t(B.Segments))
        return fail(Entity, formatv("{0}: {1} bytes do not split into {2} segments", SlotName,
                                    S.Bytes, B.Segments)
                                .str());
      // A tensor is strided across the segments: no one address holds it.
      if (S.Mode == SlotMode::View && B.Segments > 1)
        return fail(Entity, formatv("{0} is a view, but the buffer is split into {1} segments, "
                                    "across which a tensor's bytes are strided: expected pack or "
                                    "unpack",
                                    SlotName, B.Segments)
                                .str());
      Optional<uint64_t> End = checkedAddUnsigned(S.Offset, S.Bytes / uint64_t(B.Segments));
      if (!End || *End > Segment)
        return fail(Entity, formatv("{0} at offset {1} ({2} bytes per segment) does not fit a "
                                    "segment of {3} bytes",
                                    SlotName, S.Offset, S.Bytes / uint64_t(B.Segments), Segment)
                                .str());
    }
  }
  return Error::success();
}

Error Validator::rankSet(const Twine &Entity, const RankSet &S) const {
  if (S.All)
    return Error::success();
  for (size_t I = 0; I != S.Ranks.size(); ++I) {
    if (S.Ranks[I] < 0 || S.Ranks[I] >= P.World)
      return fail(Entity, formatv("rank {0} is not in 0..{1}", S.Ranks[I], P.World - 1).str());
    if (I && S.Ranks[I] <= S.Ranks[I - 1])
      return fail(Entity, "ranks must increase");
  }
  return Error::success();
}

Error Validator::tensorList(const Twine &Entity, StringRef What, ArrayRef<uint32_t> Ts) const {
  for (uint32_t T : Ts)
    if (T >= P.Tensors.size())
      return fail(Entity, formatv("{0} tensor {1} is not in 0..{2}", What, T,
                                  int64_t(P.Tensors.size()) - 1)
                              .str());
  return Error::success();
}

Error Validator::computes() {
  for (size_t I = 0; I != P.Computes.size(); ++I) {
    const Compute &C = P.Computes[I];
    std::string Entity = "compute " + std::to_string(I) + " @" + C.Name;
    if (Error E = rankSet(Entity, C.Ranks))
      return E;
    if (Error E = tensorList(Entity, "input", C.Inputs))
      return E;
    if (Error E = tensorList(Entity, "output", C.Outputs))
      return E;
  }
  return Error::success();
}

/// A fused comm works on its buffers: every tensor must have a slot there,
/// and no two of its inputs (or of its outputs) may overlap there, or one
/// would overwrite the other. (An input and an output may: in place.) The
/// runtime copies every \p Copied slot of the buffer (pack: in before the
/// launch; unpack: out after the wait), so each must be a tensor of the
/// comm, which every rank that issues it holds memory for.
Error Validator::bufferOf(size_t I, int32_t B, StringRef What, ArrayRef<uint32_t> Ts,
                          SlotMode Copied) {
  if (B < 0)
    return Error::success();
  // Sorted slot tensors of each buffer, made once: a scan of the slots per
  // tensor was quadratic in bucket size (a 65k-tensor bucket took seconds).
  if (SlotTensors.empty()) {
    SlotTensors.resize(P.Buffers.size());
    for (size_t K = 0; K != P.Buffers.size(); ++K) {
      for (size_t S = 0; S != P.Buffers[K].Slots.size(); ++S)
        SlotTensors[K].push_back({P.Buffers[K].Slots[S].Tensor, S});
      llvm::sort(SlotTensors[K]);
    }
  }
  const Buffer &Buf = P.Buffers[B];
  // (offset, end, tensor) of each tensor's slot, per segment.
  std::vector<std::tuple<uint64_t, uint64_t, uint32_t>> Spans;
  for (uint32_t T : Ts) {
    auto It = llvm::lower_bound(SlotTensors[B], std::pair<uint32_t, size_t>(T, 0));
    if (It == SlotTensors[B].end() || It->first != T)
      return fail(commName(I), formatv("{0} tensor %{1} has no slot in its {0} buffer {2}", What,
                                       P.Tensors[T].Name, B)
                                   .str());
    const Slot &S = Buf.Slots[It->second];
    if (S.Bytes) // buffers() checked that it fits
      Spans.emplace_back(S.Offset, S.Offset + S.Bytes / uint64_t(Buf.Segments), T);
  }
  std::vector<uint32_t> Sorted(Ts.begin(), Ts.end());
  llvm::sort(Sorted);
  for (const Slot &S : Buf.Slots)
    if (S.Mode == Copied && !std::binary_search(Sorted.begin(), Sorted.end(), S.Tensor))
      return fail(commName(I),
                  formatv("{0} buffer {1} has a slot of %{2} to {3}, which is not one of its {0} "
                          "tensors: a comm copies only its own tensors",
                          What, B, P.Tensors[S.Tensor].Name, slotModeName(Copied))
                      .str());
  llvm::sort(Spans);
  for (size_t K = 1; K < Spans.size(); ++K)
    if (std::get<0>(Spans[K]) < std::get<1>(Spans[K - 1]) &&
        std::get<2>(Spans[K]) != std::get<2>(Spans[K - 1])) // a tensor listed twice
      return fail(commName(I),
                  formatv("{0} tensors %{1} and %{2} overlap in {0} buffer {3} (offsets {4} and "
                          "{5}): each needs bytes of its own",
                          What, P.Tensors[std::get<2>(Spans[K - 1])].Name,
                          P.Tensors[std::get<2>(Spans[K])].Name, B, std::get<0>(Spans[K - 1]),
                          std::get<0>(Spans[K]))
                      .str());
  return Error::success();
}

Error Validator::side(size_t I, size_t K) {
  const Comm &C = P.Comms[I];
  const CommSide &S = C.side(K);
  std::string Entity = sideName(I, K);
  if (Error E = rankSet(Entity, S.Ranks))
    return E;
  if (Error E = tensorList(Entity, "input", S.Inputs))
    return E;
  if (Error E = tensorList(Entity, "output", S.Outputs))
    return E;
  for (int32_t B : {S.InBuffer, S.OutBuffer})
    if (B < -1 || B >= int32_t(P.Buffers.size()))
      return fail(Entity, formatv("buffer {0} is not in -1..{1}", B,
                                  int64_t(P.Buffers.size()) - 1)
                              .str());
  if (S.Counts < -1 || S.Counts >= int32_t(P.Tensors.size()))
    return fail(Entity, formatv("counts tensor {0} is not in 0..{1}", S.Counts,
                                int64_t(P.Tensors.size()) - 1)
                            .str());
  // Its results are tensors of their own: one listed twice would be
  // written twice, each time with other bytes.
  std::vector<uint32_t> Written(S.Outputs);
  llvm::sort(Written);
  if (auto Twice = std::adjacent_find(Written.begin(), Written.end()); Twice != Written.end())
    return fail(Entity, formatv("output tensor {0} %{1} is listed twice: expected each result "
                                "once",
                                *Twice, P.Tensors[*Twice].Name)
                            .str());
  // The dtype is how the runtime reads the bytes: it must be the tensors'.
  for (const std::vector<uint32_t> *Ts : {&S.Inputs, &S.Outputs})
    for (uint32_t T : *Ts)
      if (P.Tensors[T].Type.Elem != C.Elem)
        return fail(Entity, formatv("dtype {0}, but tensor {1} %{2} is {3}", elemTypeName(C.Elem),
                                    T, P.Tensors[T].Name, P.Tensors[T].Type.str())
                                .str());
  if (K == 0)
    return Error::success();
  // A joint comm is one collective its members issue through different
  // tensors: each issuing rank picks one side.
  if (!isCollective(C.Kind))
    return fail(Entity, "only a collective has sides (a send or recv is one rank's own)");
  if (S.Ranks.All || S.Ranks.Ranks.empty())
    return fail(Entity, "a side of a joint comm names the ranks that issue it (not all, not none)");
  // What the members pair up element by element: tensor k of every side
  // holds as many bytes (and, moving rows, as many rows).
  for (auto [Mine, First, What] :
       {std::make_tuple(&S.Inputs, &C.Inputs, "input"),
        std::make_tuple(&S.Outputs, &C.Outputs, "output")}) {
    if (Mine->size() != First->size())
      return fail(Entity, formatv("has {0} {1} tensors, side 0 has {2}: the sides of a joint "
                                  "comm move tensors of the same sizes",
                                  Mine->size(), What, First->size())
                              .str());
    for (size_t T = 0; T != Mine->size(); ++T) {
      const TensorType &A = P.Tensors[(*Mine)[T]].Type, &B = P.Tensors[(*First)[T]].Type;
      bool Rows = C.Kind == CommKind::AllToAllV &&
                  (A.Shape.empty() || B.Shape.empty() || A.Shape[0] != B.Shape[0]);
      if (Bytes[(*Mine)[T]] != Bytes[(*First)[T]] || Rows)
        return fail(Entity, formatv("{0} tensor %{1} is {2}, but side 0's is %{3} : {4}: the "
                                    "sides of a joint comm move tensors of the same sizes",
                                    What, P.Tensors[(*Mine)[T]].Name, A.str(),
                                    P.Tensors[(*First)[T]].Name, B.str())
                                .str());
    }
  }
  for (size_t J = 0; J != K; ++J)
    if (C.side(J).Ranks.intersects(S.Ranks))
      return fail(Entity, formatv("its ranks {0} meet those of side {1} ({2}): each rank issues "
                                  "the comm through one side",
                                  S.Ranks.str(), J, C.side(J).Ranks.str())
                              .str());
  return Error::success();
}

Error Validator::comm(size_t I) {
  const Comm &C = P.Comms[I];
  std::string Entity = commName(I);
  for (size_t K = 0; K != C.numSides(); ++K)
    if (Error E = side(I, K))
      return E;
  if (C.Group < -1 || C.Group >= int32_t(P.Groups.size()))
    return fail(Entity, formatv("group {0} is not in 0..{1}", C.Group,
                                int64_t(P.Groups.size()) - 1)
                            .str());
  if (isCollective(C.Kind) && C.Group < 0)
    return fail(Entity, "a collective needs a group");
  // Every issuing rank is in the group; a group size the same for all of
  // them where the shape depends on it.
  int64_t N = -1;
  if (C.Group >= 0) {
    const Group &G = P.Groups[C.Group];
    if (Error E = forIssuers(C, [&](int64_t R) -> Error {
          int32_t S = subgroupOf(C.Group, R);
          if (S < 0)
            return fail(Entity, formatv("rank {0} issues it, but is not a member of group @{1}",
                                        R, G.Name)
                                    .str());
          int64_t Size = int64_t(G.Subgroups[S].size());
          if (N >= 0 && Size != N && isCollective(C.Kind) && C.Kind != CommKind::Barrier &&
              C.Kind != CommKind::AllReduce && C.Kind != CommKind::Broadcast)
            return fail(Entity, formatv("its ranks are in subgroups of @{0} of sizes {1} and {2}; "
                                        "its shape needs one size",
                                        G.Name, N, Size)
                                    .str());
          N = std::max(N, Size);
          return Error::success();
        }))
      return E;
    // A collective completes only when every member of its subgroup issues
    // it: one that does not leaves the others waiting (on NCCL, for ever).
    // Compile never writes that (check-cross-rank refuses it); a plan file
    // can say anything, and this check costs O(world log world).
    if (isCollective(C.Kind)) {
      std::vector<uint8_t> Seen(G.Subgroups.size(), 0);
      if (Error E = forIssuers(C, [&](int64_t R) -> Error {
            int32_t S = subgroupOf(C.Group, R);
            if (Seen[S])
              return Error::success();
            Seen[S] = 1;
            for (int32_t M : G.Subgroups[S])
              if (!C.issuedOn(M))
                return fail(Entity,
                            formatv("rank {0} issues it, but rank {1}, a member of its subgroup "
                                    "of @{2}, does not: a collective completes only when every "
                                    "member of its subgroup issues it",
                                    R, M, G.Name)
                                .str());
            return Error::success();
          }))
        return E;
    }
  }
  // No rank issues it (its `when` holds on no member): its shape is the
  // one the IR inferred, for the group's size, not the world's.
  if (N < 0 && C.Group >= 0 && !P.Groups[C.Group].Subgroups.empty())
    N = int64_t(P.Groups[C.Group].Subgroups.front().size());
  if (N < 0)
    N = P.World;
  if (Error E = commFlags(I))
    return E;
  for (size_t K = 0; K != C.numSides(); ++K) {
    const CommSide &S = C.side(K);
    if (Error E = bufferOf(I, S.InBuffer, "input", S.Inputs, SlotMode::Pack))
      return E;
    if (Error E = bufferOf(I, S.OutBuffer, "output", S.Outputs, SlotMode::Unpack))
      return E;
    if (Error E = commShape(I, K, N))
      return E;
  }
  return Error::success();
}

Error Validator::commFlags(size_t I) {
  const Comm &C = P.Comms[I];
  std::string Entity = commName(I);
  // The factor every backend multiplies by: a value of the element type.
  // (Split sizes are checked per side, in commShape.)
  if (hasReduceOp(C.Kind) && C.Reduce == ReduceOp::PremulSum)
    if (std::optional<std::string> Why = premulFactorProblem(C.Elem, C.Scale))
      return fail(Entity, *Why);
  bool P2P = !isCollective(C.Kind);
  if (P2P || hasRoot(C.Kind)) {
    StringRef Word = P2P ? "peer" : "root";
    if (int64_t(C.Peers.size()) != P.World)
      return fail(Entity, formatv("has {0} {1}s; expected one per rank of the world ({2})",
                                  C.Peers.size(), Word, P.World)
                              .str());
    if (Error E = forIssuers(C, [&](int64_t R) -> Error {
          int64_t V = C.Peers[R];
          if (P2P) {
            if (V < 0 || V >= P.World || V == R)
              return fail(Entity, formatv("peer {0} of rank {1} is not a rank of 0..{2} other "
                                          "than itself",
                                          V, R, P.World - 1)
                                      .str());
            if (C.Group >= 0 && subgroupOf(C.Group, V) != subgroupOf(C.Group, R))
              return fail(Entity, formatv("peer {0} of rank {1} is not in its subgroup of @{2}", V,
                                          R, P.Groups[C.Group].Name)
                                      .str());
            return Error::success();
          }
          int64_t Size = int64_t(P.Groups[C.Group].Subgroups[subgroupOf(C.Group, R)].size());
          if (V < 0 || V >= Size)
            return fail(Entity, formatv("root {0} of rank {1} is not in 0..{2}, the local ranks "
                                        "of its subgroup of @{3}",
                                        V, R, Size - 1, P.Groups[C.Group].Name)
                                    .str());
          return Error::success();
        }))
      return E;
    // A rank that does not issue the comm has none: the writer leaves such
    // an entry out, so a plan with one would not read back as it was.
    for (int64_t R = 0; R != P.World; ++R)
      if (!C.issuedOn(R) && C.Peers[R] != -1)
        return fail(Entity, formatv("{0} {1} of rank {2}, which does not issue the comm: "
                                    "expected -1",
                                    Word, C.Peers[R], R)
                                .str());
  }
  // A fenced launch waits for the computes issued before it on the rank;
  // only an async comm has a launch apart from its wait (the compiler fences
  // only async prefetch gathers, passes/Prefetch.cpp).
  if (C.Fenced && !C.Async)
    return fail(Entity, "is fenced, so it is async (a fenced launch waits for the computes "
                        "before it, then the comm runs while later ones do; a blocking comm "
                        "has no launch apart from its wait)");
  if (C.Batch >= 0) {
    if (C.Kind != CommKind::Send && C.Kind != CommKind::Recv)
      return fail(Entity, "is in p2p batch " + std::to_string(C.Batch) +
                              ", which holds only sends and recvs");
    if (!C.Async)
      return fail(Entity, "is in a p2p batch, so it is async (it completes at the batch's end)");
    if (C.Batch > LastBatch + 1)
      return fail(Entity, formatv("is in p2p batch {0} before batch {1}: batches are numbered in "
                                  "comm order",
                                  C.Batch, LastBatch + 1)
                              .str());
    LastBatch = std::max<int64_t>(LastBatch, C.Batch);
  }
  return Error::success();
}

Error Validator::commShape(size_t I, size_t K, int64_t N) {
  const Comm &C = P.Comms[I];
  const CommSide &Side = C.side(K);
  std::string Entity = sideName(I, K);
  if (C.Kind != CommKind::AllToAllV && (Side.Counts >= 0 || !C.Splits.empty()))
    return fail(Entity, "only all_to_all_v takes split sizes");
  if (C.Kind == CommKind::AllToAllV)
    return allToAllV(I, K, N);
  auto Sum = [&](ArrayRef<uint32_t> Ts) {
    uint64_t S = 0; // each at most 2^63-1: a sum of two fits, more is checked
    for (uint32_t T : Ts) {
      Optional<uint64_t> X = checkedAddUnsigned(S, Bytes[T]);
      S = X ? *X : UINT64_MAX;
    }
    return S;
  };
  if (C.Kind == CommKind::Send || C.Kind == CommKind::Recv) {
    bool Send = C.Kind == CommKind::Send;
    if (Side.Inputs.size() != (Send ? 1u : 0u) || Side.Outputs.size() != (Send ? 0u : 1u))
      return fail(Entity, formatv("has {0} input and {1} output tensors; a {2} {3}s exactly one",
                                  Side.Inputs.size(), Side.Outputs.size(), commKindName(C.Kind),
                                  commKindName(C.Kind))
                              .str());
    return Error::success();
  }
  if (C.Kind == CommKind::Barrier) {
    if (!Side.Inputs.empty() || !Side.Outputs.empty())
      return fail(Entity, "a barrier moves no tensors");
    return Error::success();
  }
  // The runtime moves the fused buffers, or else the one tensor each way.
  bool Fused = Side.InBuffer >= 0;
  if (Fused != (Side.OutBuffer >= 0))
    return fail(Entity, formatv("inbuf {0} and outbuf {1}: a fused comm has both, an unfused "
                                "one neither",
                                Side.InBuffer, Side.OutBuffer)
                            .str());
  if (!Fused && (Side.Inputs.size() != 1 || Side.Outputs.size() != 1))
    return fail(Entity, formatv("has {0} input and {1} output tensors and no buffers; expected "
                                "one of each",
                                Side.Inputs.size(), Side.Outputs.size())
                            .str());
  uint64_t In = Fused ? P.Buffers[Side.InBuffer].Bytes : Sum(Side.Inputs);
  uint64_t Out = Fused ? P.Buffers[Side.OutBuffer].Bytes : Sum(Side.Outputs);
  if (!Fused && (Sum(Side.Inputs) > In || Sum(Side.Outputs) > Out))
    return fail(Entity, "its tensors do not fit its buffers");
  // The sides of a joint comm move as many bytes each (the members of a
  // collective agree on its size).
  if (K > 0) {
    const CommSide &First = C.side(0);
    uint64_t FirstIn = First.InBuffer >= 0 ? P.Buffers[First.InBuffer].Bytes : Sum(First.Inputs);
    if (In != FirstIn)
      return fail(Entity, formatv("moves {0} bytes, but side 0 moves {1}: the members of a "
                                  "collective move as many bytes each",
                                  In, FirstIn)
                              .str());
  }
  uint64_t ES = elemTypeBytes(C.Elem);
  uint64_t Want = In;
  StringRef Rule = "as many bytes as its input";
  switch (C.Kind) {
  case CommKind::AllReduce:
  case CommKind::Broadcast:
  case CommKind::AllToAll:
    break;
  case CommKind::AllGather:
    Rule = "group size times its input";
    Want = checkedMulUnsigned(In, uint64_t(N)).getValueOr(UINT64_MAX);
    break;
  case CommKind::ReduceScatter:
    Rule = "its input divided by the group size";
    Want = In % uint64_t(N) ? UINT64_MAX : In / uint64_t(N);
    break;
  default:
    llvm_unreachable("handled above");
  }
  if (Out != Want)
    return fail(Entity, formatv("its output has {0} bytes; expected {1} ({2} of {3} bytes, "
                                "group size {4})",
                                Out, Rule, Want == UINT64_MAX ? "none" : std::to_string(Want), In,
                                N)
                            .str());
  uint64_t Unit = C.Kind == CommKind::AllToAll ? ES * uint64_t(N) : ES;
  if (In % Unit)
    return fail(Entity, formatv("its input of {0} bytes is not a whole number of {1}-byte units",
                                In, Unit)
                            .str());
  return Error::success();
}

Error Validator::allToAllV(size_t I, size_t SideIndex, int64_t N) {
  const Comm &C = P.Comms[I];
  const CommSide &Side = C.side(SideIndex);
  std::string Entity = sideName(I, SideIndex);
  if (Side.Inputs.empty() || Side.Inputs.size() != Side.Outputs.size())
    return fail(Entity, formatv("has {0} inputs and {1} outputs; expected one output per input",
                                Side.Inputs.size(), Side.Outputs.size())
                            .str());
  const TensorType &In0 = P.Tensors[Side.Inputs[0]].Type,
                   &Out0 = P.Tensors[Side.Outputs[0]].Type;
  for (size_t K = 0; K != Side.Inputs.size(); ++K) {
    const TensorType &In = P.Tensors[Side.Inputs[K]].Type,
                     &Out = P.Tensors[Side.Outputs[K]].Type;
    if (In.Shape.empty() || Out.Shape.empty() ||
        ArrayRef<int64_t>(In.Shape).drop_front() != ArrayRef<int64_t>(Out.Shape).drop_front() ||
        In.Shape[0] != In0.Shape[0] || Out.Shape[0] != Out0.Shape[0])
      return fail(Entity, formatv("moves rows: {0} -> {1} must have the trailing dimensions of "
                                  "each other and the rows of {2} -> {3}",
                                  In.str(), Out.str(), In0.str(), Out0.str())
                              .str());
  }
  if ((Side.Counts >= 0) != (C.Counts >= 0))
    return fail(Entity, "its sides disagree on where the split sizes come from (a counts tensor "
                        "or static split sizes)");
  if (Side.Counts >= 0) {
    const TensorType &T = P.Tensors[Side.Counts].Type;
    if (isFloatType(T.Elem) || T.Elem == ElemType::F8E4M3 || T.Elem == ElemType::F8E5M2)
      return fail(Entity, "counts tensor %" + P.Tensors[Side.Counts].Name + " is " + T.str() +
                              "; expected an integer type");
    if (T.numElements() < N) // its bytes were checked, so this cannot wrap
      return fail(Entity, formatv("counts tensor %{0} is {1}; expected at least {2} entries, one "
                                  "per rank of its group",
                                  P.Tensors[Side.Counts].Name, T.str(), N)
                              .str());
    if (!C.Splits.empty())
      return fail(Entity, "has both a counts tensor and static split sizes");
    return Error::success();
  }
  if (int64_t(C.Splits.size()) != N * N) // N <= 2^20: no overflow
    return fail(Entity, formatv("has {0} split sizes; its group has {1} ranks, so it needs "
                                "{1} x {1} = {2}",
                                C.Splits.size(), N, N * N)
                            .str());
  int64_t InRows = In0.Shape[0], OutRows = Out0.Shape[0];
  for (int64_t From = 0; From != N; ++From) {
    int64_t Sent = 0, Received = 0;
    for (int64_t To = 0; To != N; ++To) {
      int64_t S = C.Splits[From * N + To], R = C.Splits[To * N + From];
      if (S < 0)
        return fail(Entity, formatv("split size {0} (row {1}, column {2}) is negative", S, From,
                                    To)
                                .str());
      Optional<int64_t> A = checkedAdd(Sent, S), B = checkedAdd(Received, R);
      Sent = A ? *A : INT64_MAX;
      Received = B ? *B : INT64_MAX;
    }
    if (Sent > InRows)
      return fail(Entity, formatv("local rank {0} sends {1} rows in all, more than the {2} of its "
                                  "input",
                                  From, Sent == INT64_MAX ? "over 2^63-1" : std::to_string(Sent),
                                  InRows)
                              .str());
    if (Received > OutRows)
      return fail(Entity, formatv("local rank {0} receives {1} rows in all, more than the {2} of "
                                  "its output",
                                  From,
                                  Received == INT64_MAX ? "over 2^63-1" : std::to_string(Received),
                                  OutRows)
                              .str());
  }
  return Error::success();
}

/// Who produces tensor \p T, for a message: its compute, or its comm (whose
/// results are there once it is waited for).
std::string Validator::producerOf(uint32_t T) const {
  for (size_t I = 0; I != P.Computes.size(); ++I)
    if (llvm::is_contained(P.Computes[I].Outputs, T))
      return "compute " + std::to_string(I) + " @" + P.Computes[I].Name;
  for (size_t I = 0; I != P.Comms.size(); ++I)
    for (size_t K = 0; K != P.Comms[I].numSides(); ++K)
      if (llvm::is_contained(P.Comms[I].side(K).Outputs, T))
        return sideName(I, K) + ", once waited for";
  return "nothing";
}

/// One walk over the steps. Dataflow: a tensor some step produces (a
/// compute's output, a comm's once it is waited for) is there only after
/// that step; one nothing produces is there from the start. Every step may
/// read only what is there, or a compute would read a comm's results while
/// they are written. A wait that names its ranks produces on those ranks
/// only.
class Validator::StepWalk {
public:
  explicit StepWalk(const Validator &V) : V(V), P(V.P) {
    Produced.assign(P.Tensors.size(), Everywhere);
    for (const Compute &C : P.Computes)
      for (uint32_t T : C.Outputs)
        Produced[T] = Absent;
    for (const Comm &C : P.Comms)
      for (size_t K = 0; K != C.numSides(); ++K)
        for (uint32_t T : C.side(K).Outputs)
          Produced[T] = Absent;
    ComputeSeen.assign(P.Computes.size(), 0);
    size_t Sides = 0;
    for (const Comm &C : P.Comms) {
      SideBase.push_back(Sides);
      Sides += C.numSides();
    }
    State.assign(Sides, NotLaunched);
    BatchSize.assign(size_t(V.LastBatch + 1), 0); // comm() checked the numbering
    for (const Comm &C : P.Comms)
      if (C.Batch >= 0)
        ++BatchSize[C.Batch];
  }

  Error run() {
    for (size_t I = 0; I != P.Steps.size(); ++I)
      if (Error E = step(I))
        return E;
    return everythingRan();
  }

private:
  Error step(size_t I) {
    const Step &S = P.Steps[I];
    std::string Entity = "step " + std::to_string(I) + " (" + stepKindName(S.Kind).str() + " " +
                         std::to_string(S.Index) + ")";
    if (Error E = stepRanks(Entity, S))
      return E;
    if (S.Kind == StepKind::Compute)
      return compute(Entity, S);
    if (S.Index >= P.Comms.size())
      return V.fail(Entity, formatv("comm {0} is not in 0..{1}", S.Index,
                                    int64_t(P.Comms.size()) - 1)
                                .str());
    const Comm &C = P.Comms[S.Index];
    Expected<size_t> K = sideOf(Entity, S, C);
    if (!K)
      return K.takeError();
    size_t Flat = SideBase[S.Index] + *K;
    if (Error E = batchOrder(Entity, S, C, Flat))
      return E;
    if (S.Kind == StepKind::Launch)
      return launch(Entity, P.ranksOf(S), C.side(*K), Flat);
    return wait(Entity, P.ranksOf(S), C.side(*K), Flat);
  }

  /// A step that names its ranks names some, and is not a compute's.
  Error stepRanks(const std::string &Entity, const Step &S) const {
    if (S.Ranks == Step::AllRanks)
      return Error::success();
    if (S.Ranks >= P.StepRanks.size())
      return V.fail(Entity, formatv("rank set {0} is not in 0..{1}", S.Ranks,
                                    int64_t(P.StepRanks.size()) - 1)
                                .str());
    if (Error E = V.rankSet(Entity, P.StepRanks[S.Ranks]))
      return E;
    if (P.StepRanks[S.Ranks].size(P.World) == 0)
      return V.fail(Entity, "names no rank");
    if (S.Kind == StepKind::Compute)
      return V.fail(Entity, "names ranks, but a compute step runs on its compute's ranks");
    return Error::success();
  }

  Error compute(const std::string &Entity, const Step &S) {
    if (S.Index >= P.Computes.size())
      return V.fail(Entity, formatv("compute {0} is not in 0..{1}", S.Index,
                                    int64_t(P.Computes.size()) - 1)
                                .str());
    if (ComputeSeen[S.Index]++)
      return V.fail(Entity, "runs its compute a second time");
    const Compute &C = P.Computes[S.Index];
    if (Error E = readsAll(Entity, "compute @" + C.Name, C.Ranks, C.Inputs))
      return E;
    produce(C.Ranks, C.Ranks, C.Outputs);
    return Error::success();
  }

  /// The side of \p C the step runs (its ranks are all of it).
  Expected<size_t> sideOf(const std::string &Entity, const Step &S, const Comm &C) const {
    const RankSet &On = P.ranksOf(S);
    size_t K = 0;
    if (C.isJoint()) {
      if (S.Ranks == Step::AllRanks)
        return V.fail(Entity, "names no ranks, but its comm is joint: each side has steps of "
                              "its own");
      while (K + 1 < C.numSides() && !C.side(K).Ranks.contains(On.Ranks.front()))
        ++K;
    }
    const CommSide &Side = C.side(K);
    if (!On.isSubsetOf(Side.Ranks, P.World))
      return V.fail(Entity, formatv("runs on ranks {0}, which do not all issue {1} through one "
                                    "side",
                                    On.str(), C.isJoint() ? "its joint comm" : "its comm")
                                .str());
    if (S.Kind == StepKind::Launch && !Side.Ranks.isSubsetOf(On, P.World))
      return V.fail(Entity, formatv("launches its comm on ranks {0} of the {1}: a side is "
                                    "launched by one step on all its ranks",
                                    On.str(), Side.Ranks.str())
                                .str());
    return K;
  }

  /// A p2p batch: its launches are consecutive steps, and the waits for
  /// exactly its comms follow them at once (where NCCL's group ends).
  Error batchOrder(const std::string &Entity, const Step &S, const Comm &C, size_t Flat) {
    int32_t B = C.Batch;
    auto Broken = [&](int32_t Batch) {
      return V.fail(Entity, formatv("breaks p2p batch {0}: its comms are launched in "
                                    "consecutive steps and waited for, each once, right after "
                                    "them",
                                    Batch)
                                .str());
    };
    if (OpenBatch >= 0 && !(S.Kind == StepKind::Launch && B == OpenBatch && !BatchWaits)) {
      if (S.Kind != StepKind::Wait || B != OpenBatch || State[Flat] != Launched ||
          BatchLaunches != BatchSize[OpenBatch])
        return Broken(OpenBatch);
      ++BatchWaits;
      if (BatchWaits == BatchLaunches)
        OpenBatch = -1;
    } else if (S.Kind == StepKind::Launch && B >= 0 && B != OpenBatch) {
      if (!BatchSeen.insert(B).second)
        return Broken(B);
      OpenBatch = B;
      BatchLaunches = BatchWaits = 0;
    }
    if (S.Kind == StepKind::Launch && B >= 0)
      ++BatchLaunches;
    return Error::success();
  }

  Error launch(const std::string &Entity, const RankSet &On, const CommSide &Side, size_t Flat) {
    uint8_t &St = State[Flat];
    if (St != NotLaunched)
      return V.fail(Entity, "launches its comm a second time");
    St = Launched;
    if (Error E = readsAll(Entity, "its comm", On, Side.Inputs))
      return E;
    // An all_to_all_v reads its split sizes from its counts tensor.
    if (Side.Counts >= 0)
      return readsAll(Entity, "its comm", On, {uint32_t(Side.Counts)});
    return Error::success();
  }

  /// A comm whose results are waited for in two `wait` ops has two wait
  /// steps; the second finds it complete.
  Error wait(const std::string &Entity, const RankSet &On, const CommSide &Side, size_t Flat) {
    uint8_t &St = State[Flat];
    if (St == NotLaunched)
      return V.fail(Entity, "waits for its comm before it is launched");
    if (St != Waited) {
      RankSet &Now = WaitedOn[Flat];
      Now = St == WaitedOnSome ? RankSet::unite(Now, On, P.World) : On;
      St = Side.Ranks.isSubsetOf(Now, P.World) ? Waited : WaitedOnSome;
      if (St == Waited)
        WaitedOn.erase(Flat);
    }
    produce(On, Side.Ranks, Side.Outputs);
    return Error::success();
  }

  Error readsAll(const std::string &Entity, StringRef Reader, const RankSet &On,
                 ArrayRef<uint32_t> Ts) {
    for (uint32_t T : Ts)
      if (Produced[T] == Absent ||
          (Produced[T] == OnSomeRanks && !On.isSubsetOf(ProducedOn[T], P.World)))
        return V.fail(Entity, formatv("{0} reads %{1} before it is produced (by {2}): a step "
                                      "reads only what earlier steps produced",
                                      Reader, P.Tensors[T].Name, V.producerOf(T))
                                  .str());
    return Error::success();
  }

  void produce(const RankSet &On, const RankSet &Everyone, ArrayRef<uint32_t> Ts) {
    bool All = Everyone.isSubsetOf(On, P.World);
    for (uint32_t T : Ts) {
      if (Produced[T] == Everywhere)
        continue;
      if (All) {
        Produced[T] = Everywhere;
        ProducedOn.erase(T);
        continue;
      }
      RankSet &Now = ProducedOn[T];
      if (Produced[T] == Absent)
        Now = On;
      else
        Now = RankSet::unite(Now, On, P.World);
      Produced[T] = OnSomeRanks;
    }
  }

  /// At the end: no batch open, every compute run, every side launched and
  /// waited for by all its ranks.
  Error everythingRan() {
    if (OpenBatch >= 0)
      return V.fail(formatv("p2p batch {0}", OpenBatch),
                    "its comms are not all waited for at its end");
    for (size_t I = 0; I != P.Computes.size(); ++I)
      if (!ComputeSeen[I])
        return V.fail(formatv("compute {0} @{1}", I, P.Computes[I].Name), "no step runs it");
    for (size_t I = 0; I != P.Comms.size(); ++I)
      for (size_t K = 0; K != P.Comms[I].numSides(); ++K) {
        size_t Flat = SideBase[I] + K;
        if (State[Flat] == NotLaunched)
          return V.fail(V.sideName(I, K), "no step launches it");
        if (State[Flat] == Launched)
          return V.fail(V.sideName(I, K), "it is launched but never waited for");
        if (State[Flat] == WaitedOnSome) {
          const RankSet &Ranks = P.Comms[I].side(K).Ranks, &Waiters = WaitedOn[Flat];
          int64_t Missing = 0;
          while (!Ranks.contains(Missing) || Waiters.contains(Missing))
            ++Missing; // some rank of the side did not wait
          return V.fail(V.sideName(I, K), formatv("it is launched, but rank {0} never waits for "
                                                  "it (ranks {1} do)",
                                                  Missing, Waiters.str())
                                              .str());
        }
      }
    return Error::success();
  }

  const Validator &V;
  const Plan &P;
  enum : uint8_t { Absent, Everywhere, OnSomeRanks };
  std::vector<uint8_t> Produced;
  std::map<uint32_t, RankSet> ProducedOn; ///< the tensors that are OnSomeRanks
  std::vector<uint8_t> ComputeSeen;
  /// Per side of each comm (SideBase: comm -> its first), whether it was
  /// launched, and the ranks that waited for it so far.
  std::vector<size_t> SideBase;
  enum : uint8_t { NotLaunched, Launched, Waited, WaitedOnSome };
  std::vector<uint8_t> State;
  std::map<size_t, RankSet> WaitedOn; ///< the sides that are WaitedOnSome
  int32_t OpenBatch = -1;
  size_t BatchLaunches = 0, BatchWaits = 0;
  std::set<int32_t> BatchSeen;
  std::vector<size_t> BatchSize;
};

Error Validator::steps() { return StepWalk(*this).run(); }

Error Validator::run() {
  if (Error E = header())
    return E;
  if (Error E = groups())
    return E;
  if (Error E = tensors())
    return E;
  if (Error E = buffers())
    return E;
  if (Error E = computes())
    return E;
  for (size_t I = 0; I != P.Comms.size(); ++I)
    if (Error E = comm(I))
      return E;
  return steps();
}

} // namespace

Error validatePlan(const Plan &P, StringRef Name) { return Validator(P, Name).run(); }

} // namespace collc::plan
