//===- passes/Bucket.cpp - Size-capped buckets in gradient-ready order -----===//
//
// Requires: a verified program, collectives in gradient-ready order (run
// `order` first when the input's order is arbitrary). Ensures: every
// all_reduce, all_gather and reduce_scatter belongs to a bucket, and each
// bucket of several becomes one op with `bucket = <index>` and why it
// closed (`bucket_why`).
//
// Policy `ddp` is PyTorch DDP's compute_bucket_assignment_by_size: per
// element type, tensors join that type's open bucket in the order given; a
// bucket closes once its bytes reach the current limit, and that type then
// moves to the next limit (the last repeats); open buckets close at the
// end; buckets are numbered by the position of their first tensor. Default
// limits 1 MiB then 25 MiB (`limits=1MiB:25MiB`). `fixed` uses one limit
// (`bytes=`). `auto` chooses each boundary (analysis/BucketBoundaries.h):
// within each run of tensors that may share a bucket, the split whose
// communication finishes first given when each tensor is ready (the step
// simulator's compute timeline) and the cost model; it keeps those buckets
// only if their simulated step (order + schedule) is shorter than with
// DDP's default, so auto is never worse than ddp.
//
// Beyond DDP, which buckets only gradients: a bucket also closes early
// before an op that uses one of its results (FSDP's next layer needs this
// layer's weights) and before send, recv, barrier and wait.
// Like DDP's reducer, buckets launch in index order: a bucket whose last
// tensor is ready before an earlier bucket's waits for it, unless one of
// its results is needed sooner.
// Across ranks: one rewrite of the one program; every rank gets the same
// buckets. The grouping loop is fuse's too (GroupByKey.h); bucket supplies
// DDP's size rule and its words.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/Combine.h"
#include "passes/GroupByKey.h"
#include "passes/analysis/BucketBoundaries.h"
#include "passes/analysis/ProgramStepModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

struct BucketPolicy {
  enum Kind { DDP, Fixed, Auto } K = DDP;
  std::vector<uint64_t> Limits = {1ull << 20, 25ull << 20};
  LinkClass Link = defaultLinkClass();
};

bool isBucketable(const Op &O) {
  return O.Kind == OpKind::AllReduce || O.Kind == OpKind::AllGather ||
         O.Kind == OpKind::ReduceScatter;
}

/// FSDP's unit: an all_gather bucket gathers the parameters of one module,
/// the op that first needs them, so each unit can launch on its own
/// (Schedule.cpp bounds how many are in flight). Gradient buckets (DDP)
/// keep PyTorch's assignment.
bool gathersByUnit(const Op &O) { return O.Kind == OpKind::AllGather; }

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

const CloseWords BucketWords = {"closed early: %{0} is used by {1}", "closed early at {0}",
                                "closed at the end of the program",
                                "closed early: %{0} is already in this bucket",
                                "closed early: its results are first needed by {0}, the next "
                                "tensor's by {1}"};

/// \p Buckets (in the order of their first tensor, which numbers them) as
/// combinations, placed so they launch in index order.
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

/// The DDP assignment with early closing, as combinations (not yet applied).
std::vector<Combination> assignBuckets(const Program &P, ArrayRef<uint64_t> Limits) {
  // Numbered by the position of their first tensor, as groupByKey returns them.
  return placeBuckets(P, groupByKey(P, BucketRules(Limits), BucketWords));
}

/// No size rule: the longest runs the early closes allow, which auto splits.
class RunRules : public GroupRules {
public:
  bool joins(const Op &O, uint64_t) const override { return isBucketable(O); }
  bool byFirstNeed(const Op &O) const override { return gathersByUnit(O); }
};

/// When each op's results are ready with communication free: the step
/// simulator's compute timeline (latest rank), by OpId.
Expected<std::vector<double>> readyTimes(const Program &P) {
  SimOptions Opts;
  Opts.Link = {"free", 0.0, 1e12, "no communication cost"};
  Opts.RecordEvents = true;
  Expected<SimResult> Sim = simulateStep(P, Opts);
  if (!Sim)
    return Sim.takeError();
  std::vector<double> End(P.ops().size(), 0.0);
  for (const SimEvent &E : Sim->Events)
    End[E.Source] = std::max(End[E.Source], E.StartUs + E.DurUs);
  return End;
}

std::string valueName(const Program &P, ValueId V) { return "%" + P.value(V).Name.str(); }

/// Splits each run of bucketable ops (a maximal group) where the per-boundary
/// choice (BucketBoundaries.h) finishes its communication earliest on \p Link,
/// and says why each boundary is where it is.
Expected<std::vector<ClosedGroup>> chooseBuckets(const Program &P, const LinkClass &Link) {
  Expected<std::vector<double>> End = readyTimes(P);
  if (!End)
    return End.takeError();
  const auto &Ops = P.ops();
  std::vector<ClosedGroup> Out;
  for (ClosedGroup &Run : groupByKey(P, RunRules(), BucketWords)) {
    const Op &First = Ops[Run.Members.front()];
    int64_t N = P.group(First.Group).uniformSize();
    if (N < 1)
      N = P.worldSize();
    double Alpha = collectiveTimeUs(First.Kind, 0, N, Link);
    std::vector<double> Ready, Cost;
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
      Cost.push_back(collectiveTimeUs(First.Kind, reportedBytes(First.Kind, In, Out), N, Link) -
                     Alpha);
      Bytes.push_back(uint64_t(In));
    }
    std::vector<BucketChoice> Choice = chooseBucketBoundaries(Ready, Cost, Alpha);
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

class BucketPass : public Pass {
public:
  explicit BucketPass(BucketPolicy Policy) : Policy(std::move(Policy)) {}
  StringRef name() const override { return "bucket"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override;

private:
  Expected<double> simulate(const Program &P, ArrayRef<Combination> Cs);
  BucketPolicy Policy;
};

/// The simulated step of \p P bucketed as \p Cs, ordered and scheduled.
Expected<double> BucketPass::simulate(const Program &P, ArrayRef<Combination> Cs) {
  // Work on a copy: the candidate's rewrite must not touch P.
  std::unique_ptr<Program> Copy = P.clone();
  Program &C = *Copy;
  applyCombinations(C, Cs);
  DiagnosticEngine Diags;
  PassContext Ctx(Diags);
  for (auto Factory : {createOrderPass, createSchedulePass}) {
    PassOptions None;
    Expected<std::unique_ptr<Pass>> Pass = Factory(None);
    if (!Pass)
      return Pass.takeError();
    if (Expected<bool> R = (*Pass)->run(C, Ctx); !R)
      return R.takeError();
  }
  SimOptions Opts;
  Opts.Link = Policy.Link;
  Expected<SimResult> Sim = simulateStep(C, Opts);
  if (!Sim)
    return Sim.takeError();
  return Sim->StepUs;
}

Expected<bool> BucketPass::run(Program &P, PassContext &Ctx) {
  std::vector<Combination> Cs;
  if (Policy.K == BucketPolicy::Auto) {
    // Per-boundary buckets, kept only when the simulator agrees they beat
    // DDP's default, so auto is never worse than ddp.
    Expected<std::vector<ClosedGroup>> Chosen = chooseBuckets(P, Policy.Link);
    if (!Chosen)
      return Chosen.takeError();
    std::vector<Combination> PerBoundary = placeBuckets(P, std::move(*Chosen));
    std::vector<Combination> Ddp = assignBuckets(P, BucketPolicy().Limits);
    Expected<double> PerBoundaryUs = simulate(P, PerBoundary);
    if (!PerBoundaryUs)
      return PerBoundaryUs.takeError();
    Expected<double> DdpUs = simulate(P, Ddp);
    if (!DdpUs)
      return DdpUs.takeError();
    bool Keep = *PerBoundaryUs < *DdpUs;
    std::string AutoWhy =
        formatv("auto: {0} on {1} (simulated step {2:f1} us per boundary, {3:f1} us with DDP's "
                "default 1 MiB:25 MiB)",
                Keep ? "per-boundary buckets are shorter" : "DDP's default is no longer, kept",
                Policy.Link.Name, *PerBoundaryUs, *DdpUs);
    Cs = Keep ? std::move(PerBoundary) : std::move(Ddp);
    // Said once, on bucket 0.
    if (!Cs.empty())
      Cs.front().StringAttrs.front().second += "; " + AutoWhy;
  } else {
    Cs = assignBuckets(P, Policy.Limits);
  }
  if (Cs.empty())
    return false;
  // Already bucketed exactly like this: nothing to do.
  bool Same = true;
  for (const Combination &C : Cs) {
    const Op &O = P.ops()[C.Members.front()];
    const Attribute *B = O.getAttr("bucket");
    Same &= C.Members.size() == 1 && C.InsertAfter == InvalidId && B && !B->IsString &&
            B->Int == C.IntAttrs.front().second;
  }
  if (Same)
    return false;
  Ctx.addStat("bucket", "buckets", Cs.size());
  applyCombinations(P, Cs);
  return true;
}

Expected<BucketPolicy> parsePolicy(PassOptions &Opts) {
  BucketPolicy Policy;
  Expected<std::string> Name = Opts.getString("policy", "ddp", "ddp, fixed or auto (default ddp)");
  if (!Name)
    return Name.takeError();
  Expected<std::vector<uint64_t>> Limits = Opts.getBytesList(
      "limits", {1ull << 20, 25ull << 20}, "ddp: bucket caps in order, the last repeats");
  if (!Limits)
    return Limits.takeError();
  Expected<uint64_t> Bytes = Opts.getBytes("bytes", 25ull << 20, "fixed: the bucket cap");
  if (!Bytes)
    return Bytes.takeError();
  Expected<std::string> Link =
      Opts.getString("link", defaultLinkClass().Name, "auto: the link class to simulate");
  if (!Link)
    return Link.takeError();
  if (Error E = Opts.finish())
    return E;
  if (*Name == "ddp") {
    Policy.K = BucketPolicy::DDP;
    Policy.Limits = *Limits;
  } else if (*Name == "fixed") {
    if (*Bytes == 0)
      return createStringError(inconvertibleErrorCode(), "bucket{bytes=0}: expected a size > 0");
    Policy.K = BucketPolicy::Fixed;
    Policy.Limits = {*Bytes};
  } else if (*Name == "auto") {
    Policy.K = BucketPolicy::Auto;
  } else {
    return createStringError(inconvertibleErrorCode(),
                             "bucket{policy=%s}: expected ddp, fixed or auto", Name->c_str());
  }
  Expected<LinkClass> L = findLinkClass(*Link);
  if (!L)
    return L.takeError();
  Policy.Link = *L;
  return Policy;
}

} // namespace

Expected<std::unique_ptr<Pass>> createBucketPass(PassOptions &Opts) {
  Expected<BucketPolicy> Policy = parsePolicy(Opts);
  if (!Policy)
    return Policy.takeError();
  return std::make_unique<BucketPass>(std::move(*Policy));
}

} // namespace collc
