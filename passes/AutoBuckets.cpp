//===- passes/AutoBuckets.cpp - bucket{policy=auto}'s boundaries ----------===//

#include "passes/AutoBuckets.h"

#include "passes/BucketAssign.h"
#include "passes/analysis/BucketBoundaries.h"
#include "passes/analysis/ProgramStepModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

/// No size rule: the longest runs the early closes allow, which auto splits.
class RunRules : public GroupRules {
public:
  bool joins(const Op &O, uint64_t) const override { return isBucketable(O); }
  bool byFirstNeed(const Op &O) const override { return gathersByUnit(O); }
};

std::string valueName(const Program &P, ValueId V) { return "%" + P.value(V).Name.str(); }

} // namespace

/// Splits each run of bucketable ops (a maximal group) where the per-boundary
/// choice (BucketBoundaries.h) finishes its communication earliest on \p Link,
/// and says why each boundary is where it is.
Expected<std::vector<ClosedGroup>> chooseAutoBuckets(const Program &P, const LinkClass &Link) {
  Expected<std::vector<double>> End = freeCommFinishUs(P);
  if (!End)
    return End.takeError();
  const auto &Ops = P.ops();
  std::vector<ClosedGroup> Out;
  for (ClosedGroup &Run : groupByKey(P, RunRules(), BucketWords)) {
    const Op &First = Ops[Run.Members.front()];
    int64_t N = P.group(First.Group).uniformSize();
    if (N < 1)
      N = P.worldSize();
    // A bucket costs what one collective of its reported bytes costs, in the
    // range of a calibrated link that its size falls in.
    std::vector<TimePiece> Cost = collectiveTimePieces(First.Kind, N, Link);
    std::vector<double> Ready, Size;
    std::vector<uint64_t> Bytes;
    for (OpId I : Run.Members) {
      double R = 0, In = 0, Out = 0;
      for (ValueId V : Ops[I].dataOperands()) {
        In += P.value(V).Type.bytes();
        if (P.value(V).Def != InvalidId)
          R = std::max(R, (*End)[P.value(V).Def]);
      }
      for (ValueId V : Ops[I].Results)
        Out += P.value(V).Type.bytes();
      Ready.push_back(R);
      Size.push_back(reportedBytes(First.Kind, In, Out));
      Bytes.push_back(uint64_t(In));
    }
    std::vector<BucketChoice> Choice = chooseBucketBoundaries(Ready, Size, Cost);
    for (const BucketChoice &C : Choice) {
      ClosedGroup G{{Run.Members.begin() + C.Begin, Run.Members.begin() + C.End}, 0, ""};
      for (size_t I = C.Begin; I != C.End; ++I)
        G.Bytes += Bytes[I];
      std::string Timing = formatv("issued at {0:f1} us (last tensor ready at {1:f1} us, comm "
                                   "stream free at {2:f1} us), done at {3:f1} us",
                                   C.IssueUs, C.ReadyUs, C.FreeUs, C.FinishUs);
      if (C.End == Run.Members.size()) {
        G.Why = "last bucket of its run, " + Run.Why + "; " + Timing;
      } else {
        ValueId Last = Ops[Run.Members[C.End - 1]].dataOperands().back();
        ValueId Next = Ops[Run.Members[C.End]].dataOperands().front();
        double Later = Ready[C.End] - C.IssueUs;
        G.Why = Later > 0
                    ? formatv("ends at {0}: the next gradient, {1}, is ready {2:f1} us later; "
                              "merging would delay these {3} bytes by that; {4}",
                              valueName(P, Last), valueName(P, Next), Later, G.Bytes, Timing)
                          .str()
                    : formatv("ends at {0}: the next gradient, {1}, is ready but waits for the "
                              "comm stream, and a later boundary finishes no sooner; {2}",
                              valueName(P, Last), valueName(P, Next), Timing)
                          .str();
      }
      Out.push_back(std::move(G));
    }
  }
  llvm::sort(Out, [](const ClosedGroup &A, const ClosedGroup &B) {
    return A.Members.front() < B.Members.front();
  });
  return Out;
}

} // namespace collc
