//===- tools/collc/bench/ReplayPlans.cpp - The plans collc bench replays ------===//

#include "tools/collc/bench/ReplayPlans.h"

#include "compiler/Compile.h"

using namespace llvm;

namespace collc::tool {

Expected<plan::Plan> oneAllReducePlan(uint64_t Bytes, int64_t World) {
  return compileProgramText(allReducesProgram(1, Bytes / 4, World));
}

Expected<FusedComparison> fusedComparisonPlans(unsigned Ops, int64_t World) {
  std::string Program = tinyAllReducesProgram(Ops, World);
  // Fused: every all_reduce into one bucket (caps high enough never to
  // close it); one by one: verified only, nothing fused or bucketed.
  Expected<plan::Plan> Fused = compileProgramText(
      Program, "verify,order,fuse{max-bytes=1GiB,max-count=100000},order,schedule,plan-memory");
  if (!Fused)
    return Fused.takeError();
  Expected<plan::Plan> OneByOne = compileProgramText(Program, "verify");
  if (!OneByOne)
    return OneByOne.takeError();
  return FusedComparison{std::move(*Fused), std::move(*OneByOne)};
}

} // namespace collc::tool
