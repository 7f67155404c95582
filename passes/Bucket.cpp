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
// (`bytes=`). `auto` tries caps from 1 MiB to 256 MiB and keeps the one
// whose simulated step (order + schedule + the cost model) is shortest.
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
#include "passes/analysis/ProgramStepModel.h"

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
                                "closed at the end of the program"};

/// The DDP assignment with early closing, as combinations (not yet applied).
std::vector<Combination> assignBuckets(const Program &P, ArrayRef<uint64_t> Limits) {
  const auto &Ops = P.ops();
  // Numbered by the position of their first tensor, as groupByKey returns them.
  std::vector<ClosedGroup> Buckets = groupByKey(P, BucketRules(Limits), BucketWords);

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

class BucketPass : public Pass {
public:
  explicit BucketPass(BucketPolicy Policy) : Policy(std::move(Policy)) {}
  StringRef name() const override { return "bucket"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override;

private:
  Expected<double> simulateWithCap(const Program &P, uint64_t Cap);
  BucketPolicy Policy;
};

Expected<double> BucketPass::simulateWithCap(const Program &P, uint64_t Cap) {
  // Work on a copy: the candidate's rewrite must not touch P.
  std::unique_ptr<Program> Copy = P.clone();
  Program &C = *Copy;
  applyCombinations(C, assignBuckets(C, {Cap}));
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
  std::vector<uint64_t> Limits = Policy.Limits;
  std::string AutoWhy;
  if (Policy.K == BucketPolicy::Auto) {
    Expected<double> Baseline = simulateWithCap(P, 25ull << 20);
    if (!Baseline)
      return Baseline.takeError();
    uint64_t Best = 0;
    double BestUs = 0;
    for (uint64_t MiB : {1, 2, 4, 8, 16, 25, 32, 64, 128, 256}) {
      Expected<double> Us = simulateWithCap(P, MiB << 20);
      if (!Us)
        return Us.takeError();
      // Strictly better only, so ties keep the smaller cap.
      if (!Best || *Us < BestUs) {
        Best = MiB << 20;
        BestUs = *Us;
      }
    }
    Limits = {Best};
    AutoWhy = formatv("auto: {0} buckets give the shortest simulated step on {1} ({2:f1} us; "
                      "25 MiB: {3:f1} us)",
                      bytesText(Best), Policy.Link.Name, BestUs, *Baseline);
  }
  std::vector<Combination> Cs = assignBuckets(P, Limits);
  if (Cs.empty())
    return false;
  if (!AutoWhy.empty())
    for (Combination &C : Cs)
      C.StringAttrs.front().second += "; " + AutoWhy;
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
