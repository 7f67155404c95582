//===- passes/BucketAssign.cpp - Buckets, assigned and placed -------------===//

#include "passes/BucketAssign.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc {

namespace {

std::string bytesText(uint64_t B) {
  if (B % (1ull << 20) == 0)
    return formatv("{0} MiB", B >> 20);
  if (B % 1024 == 0)
    return formatv("{0} KiB", B >> 10);
  return formatv("{0} B", B);
}

/// DDP's size rule: a bucket closes once it reaches its key's current
/// limit; each bucket so closed moves that key to the next (the last repeats).
class BucketRules : public GroupRules {
public:
  explicit BucketRules(ArrayRef<uint64_t> Limits) : Limits(Limits) {}
  bool joins(const Op &O, uint64_t) const override { return isBucketable(O); }
  bool byFirstNeed(const Op &O) const override { return gathersByUnit(O); }
  std::string fullAfter(const OpenGroup &G) const override {
    uint64_t Limit = Limits[std::min<size_t>(G.FullBefore, Limits.size() - 1)];
    if (G.Bytes < Limit)
      return {};
    return formatv("closed at {0} bytes, reaching the {1} limit", G.Bytes, bytesText(Limit));
  }

private:
  ArrayRef<uint64_t> Limits;
};

} // namespace

bool isBucketable(const Op &O) {
  return O.Kind == OpKind::AllReduce || O.Kind == OpKind::AllGather ||
         O.Kind == OpKind::ReduceScatter;
}

bool gathersByUnit(const Op &O) { return O.Kind == OpKind::AllGather; }

const CloseWords BucketWords = {"closed early: %{0} is used by {1}", "closed early at {0}",
                                "closed at the end of the program",
                                "closed early: %{0} is already in this bucket",
                                "closed early: its results are first needed by {0}, the next "
                                "tensor's by {1}"};

std::vector<Combination> placeBuckets(const Program &P, std::vector<ClosedGroup> Buckets) {
  const auto &Ops = P.ops();

  // Launch in index order where no result is needed earlier.
  std::vector<OpId> UseOf(P.numValues(), InvalidId);
  for (OpId I = Ops.size(); I-- > 0;)
    for (ValueId V : Ops[I].Operands)
      UseOf[V] = I;
  std::vector<Combination> Out;
  OpId Previous = 0;
  bool HavePrevious = false;
  for (size_t B = 0; B != Buckets.size(); ++B) {
    ClosedGroup &Bk = Buckets[B];
    OpId Last = Bk.Members.back();
    OpId Earliest = InvalidId;
    for (OpId I : Bk.Members)
      for (ValueId V : Ops[I].Results)
        Earliest = std::min(Earliest, UseOf[V]);
    Combination C;
    C.Members = Bk.Members;
    std::string Placement;
    if (HavePrevious && Previous > Last) {
      if (Earliest > Previous) {
        C.InsertAfter = Previous;
        Placement = formatv("; launches after bucket {0}, in index order", B - 1);
      } else {
        Placement = formatv("; launches before bucket {0} because a result is used first", B - 1);
      }
    }
    Previous = std::max(Previous, C.InsertAfter == InvalidId ? Last : C.InsertAfter);
    HavePrevious = true;
    C.IntAttrs.push_back({"bucket", int64_t(B)});
    C.StringAttrs.push_back(
        {"bucket_why", formatv("{0} tensor{1}, {2} bytes; {3}{4}", Bk.Members.size(),
                               Bk.Members.size() == 1 ? "" : "s", Bk.Bytes, Bk.Why, Placement)
                           .str()});
    Out.push_back(std::move(C));
  }
  return Out;
}

std::vector<Combination> assignBuckets(const Program &P, ArrayRef<uint64_t> Limits) {
  // Numbered by the position of their first tensor, as groupByKey returns them.
  return placeBuckets(P, groupByKey(P, BucketRules(Limits), BucketWords));
}

} // namespace collc
