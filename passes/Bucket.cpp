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
// DDP's default, so auto is never worse than ddp, and their peak memory
// per rank (analysis/PeakMemory.h: the runtime holds every bucket's
// staging for the whole step) is within `memory-budget`, or without one no
// more than DDP's default holds.
//
// Beyond DDP, which buckets only gradients: a bucket also closes early
// before an op that uses one of its results (FSDP's next layer needs this
// layer's weights) and before send, recv, barrier and wait.
// Like DDP's reducer, buckets launch in index order: a bucket whose last
// tensor is ready before an earlier bucket's waits for it, unless one of
// its results is needed sooner.
// Across ranks: one rewrite of the one program; every rank gets the same
// buckets. The grouping loop is fuse's too (GroupByKey.h); DDP's size rule
// and the placement in index order are BucketAssign.h, auto's boundaries
// AutoBuckets.h; this file is the pass: its policies and auto's check
// against DDP's default.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/AutoBuckets.h"
#include "passes/BucketAssign.h"
#include "passes/analysis/ProgramStepModel.h"
#include "passes/analysis/LinkFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

struct BucketPolicy {
  enum Kind { DDP, Fixed, Auto } K = DDP;
  std::vector<uint64_t> Limits = {1ull << 20, 25ull << 20};
  LinkClass Link = defaultLinkClass();
  uint64_t Budget = 0; ///< auto: peak memory per rank to stay within (0: DDP's)
};

/// A candidate bucketing's simulated step and peak memory per rank.
struct Simulated {
  double StepUs = 0;
  uint64_t PeakBytes = 0;
};

class BucketPass : public Pass {
public:
  explicit BucketPass(BucketPolicy Policy) : Policy(std::move(Policy)) {}
  StringRef name() const override { return "bucket"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override;

private:
  Expected<Simulated> simulate(const Program &P, ArrayRef<Combination> Cs,
                               const BufferLayoutOptions &Layout);
  BucketPolicy Policy;
};

/// The simulated step and peak memory of \p P bucketed as \p Cs, ordered
/// and scheduled, its buffers laid out as \p Layout (the pipeline's).
Expected<Simulated> BucketPass::simulate(const Program &P, ArrayRef<Combination> Cs,
                                         const BufferLayoutOptions &Layout) {
  // Work on a copy: the candidate's rewrite must not touch P.
  std::unique_ptr<Program> Copy = P.clone();
  Program &C = *Copy;
  applyCombinations(C, Cs);
  DiagnosticEngine Diags;
  PassContext Ctx(Diags);
  Ctx.Layout = Layout;
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
  Opts.StepOnly = true;
  Expected<SimResult> Sim = simulateStep(C, Opts);
  if (!Sim)
    return Sim.takeError();
  return Simulated{Sim->StepUs, programPeakMemory(C, Layout).Bytes};
}

Expected<bool> BucketPass::run(Program &P, PassContext &Ctx) {
  std::vector<Combination> Cs;
  if (Policy.K == BucketPolicy::Auto) {
    // Per-boundary buckets, kept only when the simulator agrees they beat
    // DDP's default, so auto is never worse than ddp.
    Expected<std::vector<ClosedGroup>> Chosen = chooseAutoBuckets(P, Policy.Link);
    if (!Chosen)
      return Chosen.takeError();
    std::vector<Combination> PerBoundary = placeBuckets(P, std::move(*Chosen));
    std::vector<Combination> Ddp = assignBuckets(P, BucketPolicy().Limits);
    BufferLayoutOptions Layout = Ctx.Layout.value_or(BufferLayoutOptions());
    Expected<Simulated> PerBoundarySim = simulate(P, PerBoundary, Layout);
    if (!PerBoundarySim)
      return PerBoundarySim.takeError();
    Expected<Simulated> DdpSim = simulate(P, Ddp, Layout);
    if (!DdpSim)
      return DdpSim.takeError();
    // Fewer, larger buckets cost memory: the runtime holds every bucket's
    // staging for the whole step (PeakMemory.h). Auto holds no more than
    // the memory budget, or without one than DDP's default buckets.
    uint64_t Limit = Policy.Budget ? Policy.Budget : DdpSim->PeakBytes;
    bool Shorter = PerBoundarySim->StepUs < DdpSim->StepUs;
    bool Fits = PerBoundarySim->PeakBytes <= Limit;
    bool Keep = Shorter && Fits;
    std::string AutoWhy =
        formatv("auto: {0} on {1} (simulated step {2:f1} us per boundary, {3:f1} us with DDP's "
                "default 1 MiB:25 MiB; peak {4} bytes per boundary, {5} {6} bytes, {7})",
                Keep      ? "per-boundary buckets are shorter"
                : Shorter ? "per-boundary buckets hold too much memory, DDP's default kept"
                          : "DDP's default is no longer, kept",
                Policy.Link.Name, PerBoundarySim->StepUs, DdpSim->StepUs,
                PerBoundarySim->PeakBytes, Fits ? "within" : "over", Limit,
                Policy.Budget ? "the memory budget" : "DDP's default's peak");
    Ctx.addMemoryBudget("bucket", Policy.Budget);
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
  Expected<uint64_t> Budget = Opts.getBytes(
      "memory-budget", 0,
      "auto: peak communication memory per rank to stay within (0: no more than DDP's default)");
  if (!Budget)
    return Budget.takeError();
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
  Expected<LinkClass> L = resolveLink(*Link);
  if (!L)
    return L.takeError();
  Policy.Link = *L;
  Policy.Budget = *Budget;
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
