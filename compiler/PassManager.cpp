//===- compiler/PassManager.cpp - Pipelines of passes ---------------------===//

#include "compiler/PassManager.h"

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "passes/Passes.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Timer.h"

using namespace llvm;

namespace collc {

namespace {
struct RegistryEntry {
  StringRef Name;
  Expected<std::unique_ptr<Pass>> (*Factory)(PassOptions &);
  StringRef Summary;
};
const RegistryEntry Registry[] = {
#define COLLC_PASS(NAME, FACTORY, SUMMARY) {NAME, FACTORY, SUMMARY},
#include "passes/Passes.def"
};
} // namespace

std::vector<std::pair<StringRef, StringRef>> registeredPasses() {
  std::vector<std::pair<StringRef, StringRef>> Out;
  for (const RegistryEntry &E : Registry)
    Out.push_back({E.Name, E.Summary});
  return Out;
}

static Error pipelineError(StringRef Text, size_t Col, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), "pipeline '%s', column %zu: %s",
                           Text.str().c_str(), Col + 1, Msg.str().c_str());
}

static bool isPassNameChar(char C) { return isAlnum(C) || C == '-' || C == '_'; }

Expected<std::vector<PassSpec>> parsePipeline(StringRef Text) {
  std::vector<PassSpec> Out;
  size_t I = 0, N = Text.size();
  auto SkipSpace = [&] {
    while (I < N && Text[I] == ' ')
      ++I;
  };
  SkipSpace();
  if (I == N)
    return Out;
  while (true) {
    SkipSpace();
    size_t Start = I;
    while (I < N && isPassNameChar(Text[I]))
      ++I;
    if (I == Start)
      return pipelineError(Text, I, "expected a pass name");
    PassSpec Spec;
    Spec.Name = Text.slice(Start, I).str();
    SkipSpace();
    if (I < N && Text[I] == '{') {
      ++I;
      while (true) {
        SkipSpace();
        size_t KeyStart = I;
        while (I < N && isPassNameChar(Text[I]))
          ++I;
        if (I == KeyStart)
          return pipelineError(Text, I, "expected an option name");
        StringRef Key = Text.slice(KeyStart, I);
        SkipSpace();
        if (I >= N || Text[I] != '=')
          return pipelineError(Text, I, "expected '=' after option '" + Key + "'");
        ++I;
        size_t ValStart = I;
        while (I < N && Text[I] != ',' && Text[I] != '}')
          ++I;
        StringRef Val = Text.slice(ValStart, I).trim();
        if (Val.empty())
          return pipelineError(Text, ValStart, "option '" + Key + "' has no value");
        for (auto &KV : Spec.Options)
          if (KV.first == Key)
            return pipelineError(Text, KeyStart, "option '" + Key + "' is given twice");
        Spec.Options.push_back({Key.str(), Val.str()});
        if (I >= N)
          return pipelineError(Text, I, "expected '}' closing the options of '" + Spec.Name + "'");
        if (Text[I++] == '}')
          break;
      }
      SkipSpace();
    }
    Out.push_back(std::move(Spec));
    if (I == N)
      return Out;
    if (Text[I] != ',')
      return pipelineError(Text, I, "expected ',' between passes");
    ++I;
  }
}

Expected<std::unique_ptr<Pass>> createPass(const PassSpec &Spec) {
  for (const RegistryEntry &E : Registry) {
    if (E.Name != Spec.Name)
      continue;
    PassOptions Opts(Spec.Name);
    for (auto &KV : Spec.Options)
      Opts.set(KV.first, KV.second);
    return E.Factory(Opts);
  }
  std::string Known;
  for (const RegistryEntry &E : Registry)
    Known += (Known.empty() ? "" : ", ") + E.Name.str();
  return createStringError(inconvertibleErrorCode(), "unknown pass '%s'; known passes: %s",
                           Spec.Name.c_str(), Known.c_str());
}

Error PassManager::addPipeline(StringRef Pipeline) {
  Expected<std::vector<PassSpec>> Specs = parsePipeline(Pipeline);
  if (!Specs)
    return Specs.takeError();
  for (const PassSpec &S : *Specs) {
    Expected<std::unique_ptr<Pass>> P = createPass(S);
    if (!P)
      return P.takeError();
    add(std::move(*P));
  }
  return Error::success();
}

Error PassManager::run(Program &P, PassContext &Ctx, raw_ostream &Log) {
  TimerGroup Timers("collc-passes", "collc pass execution timing report");
  std::vector<std::unique_ptr<Timer>> PassTimers;
  // The layout is the pipeline's, fixed before any pass runs: schedule and
  // bucket run before plan-memory, and their memory figures must be those
  // of the buffers the plan will have (its last plan-memory's, as the
  // lowering's).
  for (auto &Ps : Passes)
    Ps->preparePipeline(Ctx);
  for (auto &Ps : Passes) {
    std::string Before;
    bool NeedBefore = Opts.CheckUnchanged || Opts.PrintAfterChange;
    if (NeedBefore)
      Before = printProgram(P);
    Timer *T = nullptr;
    if (Opts.TimePasses) {
      PassTimers.push_back(std::make_unique<Timer>(Ps->name(), Ps->name(), Timers));
      T = PassTimers.back().get();
      T->startTimer();
    }
    const BufferLayout *MemoryPlanBefore = Ctx.MemoryPlan.get();
    Expected<bool> Changed = Ps->run(P, Ctx);
    if (T)
      T->stopTimer();
    if (!Changed)
      return Changed.takeError();
    // A change by any pass but the one that made it voids the memory plan
    // (as MLIR drops the analyses a pass does not preserve).
    if (*Changed && Ctx.MemoryPlan.get() == MemoryPlanBefore)
      Ctx.MemoryPlan.reset();
    // The printed form is the contract; compare it, not object identity.
    std::string After;
    if (NeedBefore && (!*Changed || Opts.PrintAfterChange))
      After = printProgram(P);
    if (!*Changed && Opts.CheckUnchanged && After != Before)
      return createStringError(inconvertibleErrorCode(),
                               "internal error: pass '%s' reported no change but changed the IR",
                               Ps->name().str().c_str());
    bool ReallyChanged = *Changed && (!Opts.PrintAfterChange || After != Before);
    if (Opts.PrintAfterAll || (Opts.PrintAfterChange && ReallyChanged)) {
      Log << "// -----// IR after " << Ps->name() << (ReallyChanged ? "" : " (no change)")
          << " //----- //\n";
      printProgram(P, Log);
    }
    if (Opts.VerifyEach) {
      if (Error E = verifyProgram(P, Ctx.Diags))
        return joinErrors(createStringError(inconvertibleErrorCode(),
                                            "the program does not verify after pass '%s'",
                                            Ps->name().str().c_str()),
                          std::move(E));
    }
  }
  if (Opts.TimePasses)
    Timers.print(Log, /*ResetAfterPrint=*/true);
  return Error::success();
}

} // namespace collc
