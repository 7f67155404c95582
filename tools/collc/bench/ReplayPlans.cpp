//===- tools/collc/bench/ReplayPlans.cpp - The plans collc bench replays ------===//

#include "tools/collc/bench/ReplayPlans.h"

#include "compiler/Compile.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::tool {

ArrayRef<OpKind> calibratedKinds() {
  static const OpKind Kinds[] = {OpKind::AllReduce, OpKind::AllGather, OpKind::ReduceScatter,
                                 OpKind::Broadcast, OpKind::AllToAll,  OpKind::Send};
  return Kinds;
}


/// Tensors in each measured bucket of a bucketable kind: a bucket of several
/// tensors lives in its own buffer, in place, as a plan's buckets do (one
/// tensor alone keeps its own input and output).
static constexpr unsigned TensorsPerBucket = 4;

static bool bucketable(OpKind K) {
  return K == OpKind::AllReduce || K == OpKind::AllGather || K == OpKind::ReduceScatter;
}

uint64_t sameOpsGranule(OpKind K, int64_t World) {
  bool Sharded = K == OpKind::AllGather || K == OpKind::ReduceScatter || K == OpKind::AllToAll;
  return (Sharded ? 4 * uint64_t(World) : 4) * (bucketable(K) ? TensorsPerBucket : 1);
}

std::string sameOpsProgram(OpKind K, uint64_t Bytes, int64_t World, unsigned Copies) {
  unsigned Parts = bucketable(K) ? TensorsPerBucket : 1;
  uint64_t E = Bytes / 4 / Parts;
  // all_gather's reported size is what it gathers: each rank gives a shard.
  uint64_t In = K == OpKind::AllGather ? E / uint64_t(World) : E;
  std::string S = formatv("program @{0}s world({1}) {\n  group @dp = world\n", opKindName(K),
                          World);
  std::string Uses;
  for (unsigned I = 0; I != Copies * Parts; ++I) {
    S += formatv("  %g{0} = compute @g{0} : f32[{1}]\n", I, In).str();
    Uses += formatv("{0}%r{1}", I ? ", " : "", I).str();
    switch (K) {
    case OpKind::AllReduce:
      S += formatv("  %r{0} = all_reduce sum %g{0} in @dp\n", I).str();
      break;
    case OpKind::AllGather:
      S += formatv("  %r{0} = all_gather %g{0} in @dp\n", I).str();
      break;
    case OpKind::ReduceScatter:
      S += formatv("  %r{0} = reduce_scatter sum %g{0} in @dp\n", I).str();
      break;
    case OpKind::Broadcast:
      S += formatv("  %r{0} = broadcast %g{0} root 0 in @dp\n", I).str();
      break;
    case OpKind::AllToAll:
      S += formatv("  %r{0} = all_to_all %g{0} in @dp\n", I).str();
      break;
    default: // send: one pair, ranks 0 to 1; the others idle
      S += formatv("  send %g{0} to 1 when rank == 0\n"
                   "  %r{0} = recv from 0 : f32[{1}] when rank == 1\n",
                   I, E)
               .str();
    }
  }
  return S + "  compute @use(" + Uses + (K == OpKind::Send ? ") when rank == 1\n}\n" : ")\n}\n");
}

Expected<plan::Plan> sameOpsPlan(OpKind K, uint64_t Bytes, int64_t World, unsigned Copies) {
  std::string Program = sameOpsProgram(K, Bytes, World, Copies);
  if (!bucketable(K)) // every copy its own comm: nothing fused
    return compileProgramText(Program, "verify,check-cross-rank,order,schedule,plan-memory");
  // Buckets of exactly Bytes, closed as the fixed policy closes them.
  Expected<std::string> Bucket = bucketPassFor(formatv("fixed:{0}B", Bytes).str());
  if (!Bucket)
    return Bucket.takeError();
  return compileProgramText(Program, defaultPipeline(*Bucket));
}

Expected<plan::Plan> oneAllReducePlan(uint64_t Bytes, int64_t World) {
  return compileProgramText(allReducesProgram(1, Bytes / 4, World));
}

Expected<FusedComparison> fusedComparisonPlans(unsigned Ops, int64_t World) {
  std::string Program = tinyAllReducesProgram(Ops, World);
  // Fused: every all_reduce into one bucket (caps high enough never to
  // close it); one by one: verified only, nothing fused or bucketed.
  Expected<plan::Plan> Fused = compileProgramText(
      Program,
      formatv("verify,order,fuse{{max-bytes=1GiB,max-count={0}},order,schedule,plan-memory",
              MaxReplayOps)
          .str());
  if (!Fused)
    return Fused.takeError();
  Expected<plan::Plan> OneByOne = compileProgramText(Program, "verify");
  if (!OneByOne)
    return OneByOne.takeError();
  return FusedComparison{std::move(*Fused), std::move(*OneByOne)};
}

} // namespace collc::tool
