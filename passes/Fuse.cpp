//===- passes/Fuse.cpp - Combine collectives that share a key --------------===//
//
// Requires: a verified program. Ensures: collectives that share a key
// (kind, reduce op, group, root, predicate, async-ness, split sizes) and an
// element type are merged into one op with one operand and one result per
// member, as long as the merged op stays within max-bytes and max-count.
// A merged op sits where its last member was, so its inputs are ready; a
// group of candidates closes before any op that uses a member's result (the
// merge would delay that result past its use) and before any send, recv,
// barrier or wait (communication never moves across those).
// Across ranks: the program is rewritten once for every rank, so every
// rank's sequence changes the same way; members keep their relative order.
//
// Ops already placed in a bucket (`bucket = N`) are left alone: their size
// was chosen on purpose. Each merged op records why its group closed:
// `fused_why`. The grouping loop is the one bucket uses (GroupByKey.h);
// fuse supplies its size rule and its words.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/Combine.h"
#include "passes/GroupByKey.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

/// Fuse's size rule: a member may not take the group past max-bytes or
/// max-count; an op larger than max-bytes alone stays as it is. Ops already
/// in a bucket stay too: their size was chosen on purpose.
class FuseRules : public GroupRules {
public:
  FuseRules(const Program &P, uint64_t MaxBytes, uint64_t MaxCount)
      : P(P), MaxBytes(MaxBytes), MaxCount(MaxCount) {}
  bool joins(const Op &O, uint64_t Bytes) const override {
    return !O.getAttr("bucket") && Bytes <= MaxBytes;
  }
  std::string fullBefore(const OpenGroup &G, const Op &O, uint64_t Bytes) const override {
    if (G.Bytes + Bytes > MaxBytes)
      return formatv("closed: adding {0} would pass max-bytes {1}", describeOp(P, O), MaxBytes);
    if (G.Members.size() + 1 > MaxCount)
      return formatv("closed at max-count {0}", MaxCount);
    return {};
  }

private:
  const Program &P;
  uint64_t MaxBytes, MaxCount;
};

const CloseWords FuseWords = {"stopped at a dependency: %{0} is used by {1}", "stopped at {0}",
                              "end of program"};

class FusePass : public Pass {
public:
  FusePass(uint64_t MaxBytes, uint64_t MaxCount) : MaxBytes(MaxBytes), MaxCount(MaxCount) {}
  StringRef name() const override { return "fuse"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override;

private:
  uint64_t MaxBytes, MaxCount;
};

Expected<bool> FusePass::run(Program &P, PassContext &Ctx) {
  std::vector<Combination> Done;
  int64_t Merged = 0;
  for (ClosedGroup &G : groupByKey(P, FuseRules(P, MaxBytes, MaxCount), FuseWords)) {
    if (G.Members.size() < 2)
      continue;
    Combination C;
    C.StringAttrs.push_back({"fused_why", formatv("{0} {1} ops, {2} bytes; {3}", G.Members.size(),
                                                  opKindName(P.ops()[G.Members.front()].Kind),
                                                  G.Bytes, G.Why)
                                              .str()});
    Merged += G.Members.size();
    C.Members = std::move(G.Members);
    Done.push_back(std::move(C));
  }
  if (Done.empty())
    return false;
  Ctx.addStat("fuse", "ops-merged", Merged);
  Ctx.addStat("fuse", "fused-ops", Done.size());
  applyCombinations(P, Done);
  return true;
}

} // namespace

Expected<std::unique_ptr<Pass>> createFusePass(PassOptions &Opts) {
  Expected<uint64_t> MaxBytes =
      Opts.getBytes("max-bytes", 32ull << 20, "largest fused op, in bytes (default 32MiB)");
  if (!MaxBytes)
    return MaxBytes.takeError();
  Expected<uint64_t> MaxCount =
      Opts.getUInt("max-count", 4096, "most collectives in one fused op (default 4096)");
  if (!MaxCount)
    return MaxCount.takeError();
  if (Error E = Opts.finish())
    return E;
  if (*MaxCount < 1)
    return createStringError(inconvertibleErrorCode(), "fuse{max-count=0}: expected at least 1");
  return std::make_unique<FusePass>(*MaxBytes, *MaxCount);
}

} // namespace collc
