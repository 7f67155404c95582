//===- tests/bench/CompilerBench.cpp - Compiler throughput ----------------===//
//
// Goals (issue 3):
//  - check-cross-rank on world 1024 with a 10k-op program in under 5 s;
//  - a program of one million ops compiles (parse, default pipeline,
//    lowering, writing the plan) in under 5 s, 100k ops in about a tenth.
// Run: build/bin/collc_compiler_bench
//
//===----------------------------------------------------------------------===//

#include "SyntheticProgram.h"

#include "compiler/Compile.h"
#include "tools/collc/BatchMalloc.h"
#include "ir/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "benchmark/benchmark.h"

using namespace collc;

static void BM_CheckCrossRank(benchmark::State &State) {
  int64_t World = State.range(0), Ops = State.range(1);
  std::string Text = bench::syntheticProgramText(Ops, World);
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, "synthetic.coll");
  if (!P) {
    State.SkipWithError(llvm::toString(P.takeError()).c_str());
    return;
  }
  for (auto _ : State) {
    PassManager PM;
    if (llvm::Error E = PM.addPipeline("check-cross-rank")) {
      State.SkipWithError(llvm::toString(std::move(E)).c_str());
      return;
    }
    DiagnosticEngine Diags(P->Source.get());
    PassContext Ctx(Diags);
    if (llvm::Error E = PM.run(*P->Prog, Ctx, llvm::nulls())) {
      State.SkipWithError(llvm::toString(std::move(E)).c_str());
      return;
    }
  }
  State.counters["rank_ops"] = double(World) * double(P->Prog->ops().size());
}
BENCHMARK(BM_CheckCrossRank)->Args({1024, 10000})->Unit(benchmark::kMillisecond);

/// Text in, plan text out: what `collc compile` does.
static void BM_Compile(benchmark::State &State) {
  std::string Text = bench::syntheticProgramText(State.range(0), 8);
  size_t PlanBytes = 0;
  for (auto _ : State) {
    llvm::Expected<ParsedProgram> P = parseProgramText(Text, "synthetic.coll");
    if (!P) {
      State.SkipWithError(llvm::toString(P.takeError()).c_str());
      return;
    }
    DiagnosticEngine Diags(P->Source.get());
    CompileOptions Opts;
    Opts.PM.CheckUnchanged = false;
    llvm::Expected<plan::Plan> Plan = compileProgram(*P->Prog, Opts, Diags, llvm::nulls());
    if (!Plan) {
      State.SkipWithError(llvm::toString(Plan.takeError()).c_str());
      return;
    }
    // To a file, as `collc compile -o` does.
    llvm::SmallString<128> Path;
    int FD;
    if (std::error_code EC = llvm::sys::fs::createTemporaryFile("collc-bench", "plan", FD, Path)) {
      State.SkipWithError(EC.message().c_str());
      return;
    }
    {
      llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
      plan::writePlan(*Plan, OS);
      PlanBytes = OS.tell();
    }
    llvm::sys::fs::remove(Path);
  }
  State.counters["ops"] = double(State.range(0));
  State.counters["plan_MB"] = double(PlanBytes) / 1e6;
}
BENCHMARK(BM_Compile)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->Iterations(1);

int main(int argc, char **argv) {
  // As collc itself does; see BatchMalloc.h.
  collc::tuneMallocForBatchWork();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
