//===- passes/PlanMemory.cpp - Record the memory plan in the IR ------------===//
//
// Requires: a verified program, after fuse/bucket (buffers follow the final
// ops). Ensures: every communication op carries `mem`, the buffers and slots
// of passes/analysis/BufferLayout.h, and the PassContext holds that layout
// (PassContext::MemoryPlan), which the lowering takes as it is: which
// tensors are zero-copy views inside the buffer, which are packed in or
// unpacked out, at which aligned offsets.
// Across ranks: the layout is a function of the program, so every rank
// computes the same offsets (they must agree: element i of a bucket is the
// same tensor element on every rank).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "passes/analysis/BufferLayout.h"

using namespace llvm;

namespace collc {

namespace {

class PlanMemoryPass : public Pass {
public:
  explicit PlanMemoryPass(BufferLayoutOptions Opts) : Opts(Opts) {}
  StringRef name() const override { return "plan-memory"; }
  void preparePipeline(PassContext &Ctx) const override { Ctx.Layout = Opts; }
  Expected<bool> run(Program &P, PassContext &Ctx) override {
    auto Plan = std::make_shared<BufferLayout>(computeBufferLayout(P, Opts));
    const BufferLayout &M = *Plan;
    Ctx.Layout = Opts;
    Ctx.MemoryPlan = std::move(Plan);
    bool Changed = false;
    int64_t Copies = 0, ViewsCount = 0;
    for (OpId I = 0; I != P.ops().size(); ++I) {
      if (M.PerOp[I].In < 0 && M.PerOp[I].Out < 0)
        continue;
      std::string Text = describeOpBuffers(P, M, I);
      Op &O = P.ops()[I];
      const Attribute *Old = O.getAttr("mem");
      if (!Old || !Old->IsString || Old->Str != Text) {
        O.setAttr(P.save("mem"), P.save(Text));
        Changed = true;
      }
    }
    for (const LayoutBuffer &B : M.Buffers)
      for (const LayoutSlot &S : B.Slots)
        (S.Mode == SlotMode::View ? ViewsCount : Copies) += 1;
    Ctx.addStat("plan-memory", "buffers", M.Buffers.size());
    Ctx.addStat("plan-memory", "views", ViewsCount);
    Ctx.addStat("plan-memory", "copies", Copies);
    return Changed;
  }

private:
  BufferLayoutOptions Opts;
};

} // namespace

Expected<std::unique_ptr<Pass>> createPlanMemoryPass(PassOptions &Opts) {
  Expected<uint64_t> Align =
      Opts.getBytes("align", 256, "alignment of every slot, a power of two (default 256)");
  if (!Align)
    return Align.takeError();
  Expected<bool> Views =
      Opts.getBool("views", true, "let the model allocate tensors inside buffers (default true)");
  if (!Views)
    return Views.takeError();
  if (Error E = Opts.finish())
    return E;
  if (*Align == 0 || (*Align & (*Align - 1)))
    return createStringError(inconvertibleErrorCode(),
                             "plan-memory{align=%llu}: expected a power of two",
                             (unsigned long long)*Align);
  return std::make_unique<PlanMemoryPass>(BufferLayoutOptions{*Align, *Views});
}

} // namespace collc
