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
// `fused_why`.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/Combine.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

class FusePass : public Pass {
public:
  FusePass(uint64_t MaxBytes, uint64_t MaxCount) : MaxBytes(MaxBytes), MaxCount(MaxCount) {}
  StringRef name() const override { return "fuse"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override;

private:
  struct Open {
    CombineKey Key;
    ElemType Elem;
    std::vector<OpId> Members;
    uint64_t Bytes = 0;
    bool Closed = false;
  };

  uint64_t MaxBytes, MaxCount;
};

Expected<bool> FusePass::run(Program &P, PassContext &Ctx) {
  const auto &Ops = P.ops();
  std::vector<Open> Groups;                      // in the order they opened
  std::vector<int32_t> Owner(P.numValues(), -1); // value -> open group producing it
  std::vector<size_t> OpenList;                  // indices of open groups
  std::vector<Combination> Done;
  int64_t Merged = 0;

  auto Close = [&](size_t G, const std::string &Why) {
    Open &Grp = Groups[G];
    Grp.Closed = true;
    for (OpId I : Grp.Members)
      for (ValueId V : Ops[I].Results)
        Owner[V] = -1;
    if (Grp.Members.size() < 2)
      return;
    Combination C;
    C.Members = Grp.Members;
    C.StringAttrs.push_back({"fused_why", formatv("{0} {1} ops, {2} bytes; {3}", Grp.Members.size(),
                                                  opKindName(Grp.Key.Kind), Grp.Bytes, Why)
                                              .str()});
    Merged += Grp.Members.size();
    Done.push_back(std::move(C));
  };
  auto CloseAll = [&](const std::string &Why) {
    for (size_t G : OpenList)
      Close(G, Why);
    OpenList.clear();
  };

  for (OpId I = 0; I != Ops.size(); ++I) {
    const Op &O = Ops[I];
    // A use of a member's result: that group must be issued before here.
    for (ValueId V : O.Operands) {
      int32_t G = Owner[V];
      if (G < 0 || Groups[G].Closed)
        continue;
      Close(G, formatv("stopped at a dependency: %{0} is used by {1}", P.value(V).Name,
                       describeOp(P, O)));
      llvm::erase_value(OpenList, size_t(G));
    }
    if (isOrderBarrier(O.Kind)) {
      CloseAll(formatv("stopped at {0}", describeOp(P, O)));
      continue;
    }
    // A bucket is final: its size was chosen on purpose.
    if (!isCombinable(O) || O.getAttr("bucket"))
      continue;
    CombineKey Key = CombineKey::of(O);
    ElemType Elem = P.value(O.dataOperands().front()).Type.Elem;
    uint64_t Bytes = 0;
    for (ValueId V : O.dataOperands())
      Bytes += P.value(V).Type.bytes();
    if (Bytes > MaxBytes)
      continue; // too large to share a buffer with anything
    int64_t Found = -1;
    for (size_t G : OpenList)
      if (Groups[G].Key == Key && Groups[G].Elem == Elem)
        Found = G;
    if (Found >= 0) {
      Open &Grp = Groups[Found];
      std::string Why;
      if (Grp.Bytes + Bytes > MaxBytes)
        Why = formatv("closed: adding {0} would pass max-bytes {1}", describeOp(P, O), MaxBytes);
      else if (Grp.Members.size() + 1 > MaxCount)
        Why = formatv("closed at max-count {0}", MaxCount);
      if (!Why.empty()) {
        Close(Found, Why);
        llvm::erase_value(OpenList, size_t(Found));
        Found = -1;
      }
    }
    if (Found < 0) {
      Found = Groups.size();
      Groups.push_back(Open{Key, Elem, {}, 0, false});
      OpenList.push_back(Found);
    }
    Groups[Found].Members.push_back(I);
    Groups[Found].Bytes += Bytes;
    for (ValueId V : O.Results)
      Owner[V] = Found;
  }
  CloseAll("end of program");
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
