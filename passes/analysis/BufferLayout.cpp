//===- passes/analysis/BufferLayout.cpp - Buffers and offsets of communication -------===//

#include "passes/analysis/BufferLayout.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;

namespace collc {

namespace {

class Planner {
public:
  Planner(const Program &P, uint64_t Align, bool AllowViews)
      : P(P), Align(Align), AllowViews(AllowViews), Placed(P.numValues(), 0),
        LastUse(P.numValues(), 0) {
    for (OpId I = 0; I != P.ops().size(); ++I)
      for (ValueId V : P.ops()[I].Operands)
        LastUse[V] = I;
  }

  BufferLayout run();

private:
  /// A buffer holding \p Values back to back, each \p Part of its bytes
  /// (1 or 1/n for per-rank chunks) repeated over \p Segments segments.
  int32_t addBuffer(ArrayRef<ValueId> Values, int64_t Segments, int64_t Divisor, bool Inputs,
                    bool ForceCopy, SlotMode Copy);
  bool canView(ValueId V) const {
    return AllowViews && !Placed[V] && P.ops()[P.value(V).Def].Kind == OpKind::Compute;
  }

  const Program &P;
  uint64_t Align;
  bool AllowViews;
  std::vector<uint8_t> Placed; // the value already lives in some buffer
  std::vector<OpId> LastUse;   // the last op that reads each value
  BufferLayout Plan;
};

int32_t Planner::addBuffer(ArrayRef<ValueId> Values, int64_t Segments, int64_t Divisor, bool Inputs,
                           bool ForceCopy, SlotMode Copy) {
  LayoutBuffer B;
  B.Segments = Segments;
  uint64_t Offset = 0;
  for (ValueId V : Values) {
    uint64_t Bytes = P.value(V).Type.bytes();
    SlotMode Mode = SlotMode::View;
    if (ForceCopy)
      Mode = Copy;
    else if (Inputs && !canView(V))
      Mode = SlotMode::Pack;
    if (Mode == SlotMode::View)
      Placed[V] = 1;
    B.Slots.push_back({V, Offset, Bytes, Mode});
    Offset += alignTo(Bytes / Divisor, Align);
  }
  B.Bytes = Offset * Segments;
  Plan.Buffers.push_back(std::move(B));
  return Plan.Buffers.size() - 1;
}

BufferLayout Planner::run() {
  Plan.Alignment = Align;
  const auto &Ops = P.ops();
  Plan.PerOp.assign(Ops.size(), OpBuffers());
  for (OpId I = 0; I != Ops.size(); ++I) {
    const Op &O = Ops[I];
    ArrayRef<ValueId> In = O.dataOperands();
    ArrayRef<ValueId> Out = O.Results;
    // One tensor needs no buffer of its own: the op works on the tensor
    // where it lives. all_to_all_v buckets are issued as one grouped
    // exchange of separate tensors.
    if (!isCollective(O.Kind) || In.size() < 2 || O.Kind == OpKind::AllToAllV)
      continue;
    int64_t N = std::max<int64_t>(1, P.group(O.Group).uniformSize());
    OpBuffers &M = Plan.PerOp[I];
    switch (O.Kind) {
    case OpKind::AllReduce:
    case OpKind::Broadcast: {
      // In place: results overwrite their operands' slots, so an operand
      // that is read again later must be a copy, not the tensor itself.
      for (ValueId V : In)
        if (LastUse[V] != I)
          Placed[V] = 1;
      M.In = M.Out = addBuffer(In, 1, 1, true, false, SlotMode::Pack);
      for (size_t K = 0; K != Out.size(); ++K) {
        LayoutSlot S = Plan.Buffers[M.In].Slots[K];
        S.Value = Out[K];
        S.Mode = SlotMode::View;
        Placed[Out[K]] = 1;
        Plan.Buffers[M.In].Slots.push_back(S);
      }
      break;
    }
    case OpKind::AllGather:
      M.In = addBuffer(In, 1, 1, true, false, SlotMode::Pack);
      // Rank r's inputs land in segment r: the results are strided.
      M.Out = addBuffer(Out, N, N, false, true, SlotMode::Unpack);
      break;
    case OpKind::ReduceScatter:
      // Segment r holds every tensor's r-th chunk: the inputs interleave.
      M.In = addBuffer(In, N, N, true, true, SlotMode::Pack);
      M.Out = addBuffer(Out, 1, 1, false, false, SlotMode::Unpack);
      break;
    case OpKind::AllToAll:
      M.In = addBuffer(In, N, N, true, true, SlotMode::Pack);
      M.Out = addBuffer(Out, N, N, false, true, SlotMode::Unpack);
      break;
    default:
      break;
    }
  }
  return std::move(Plan);
}

} // namespace

BufferLayout computeBufferLayout(const Program &P, const BufferLayoutOptions &Opts) {
  return Planner(P, Opts.Alignment, Opts.AllowViews).run();
}

std::string describeOpBuffers(const Program &P, const BufferLayout &M, OpId I) {
  const OpBuffers &OM = M.PerOp[I];
  // A set, not a scan of the operands per slot: buckets of one tensor
  // repeated 100k times made that quadratic. Membership only, so the order
  // of the output stays the slots'.
  DenseSet<ValueId> Operands(P.ops()[I].Operands.begin(), P.ops()[I].Operands.end());
  std::string S;
  raw_string_ostream OS(S);
  auto Side = [&](StringRef Name, int32_t B, bool InputSide) {
    const LayoutBuffer &Buf = M.Buffers[B];
    OS << Name << " #" << B << " (" << Buf.Bytes << " B";
    if (Buf.Segments > 1)
      OS << " in " << Buf.Segments << " segments";
    OS << "):";
    bool First = true;
    for (const LayoutSlot &Sl : Buf.Slots) {
      bool IsOperand = Operands.contains(Sl.Value);
      if (IsOperand != InputSide)
        continue;
      OS << (First ? " " : ", ") << '%' << P.value(Sl.Value).Name << ' ' << slotModeName(Sl.Mode)
         << '@' << Sl.Offset;
      First = false;
    }
  };
  if (OM.In >= 0)
    Side("in", OM.In, true);
  if (OM.Out >= 0 && OM.Out == OM.In) {
    OS << "; out in place";
  } else if (OM.Out >= 0) {
    if (OM.In >= 0)
      OS << "; ";
    Side("out", OM.Out, false);
  }
  return OS.str();
}

} // namespace collc
