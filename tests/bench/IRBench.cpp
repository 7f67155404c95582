//===- tests/bench/IRBench.cpp - Parser and verifier throughput -----------===//
//
// Goal (issue 2): a generated program of one million ops parses and
// verifies in under 3 s on a CI core. Run: build/bin/collc_ir_bench
//
//===----------------------------------------------------------------------===//

#include "SyntheticProgram.h"

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include "benchmark/benchmark.h"

using namespace collc;

static void BM_ParseAndVerify(benchmark::State &State) {
  std::string Text = bench::syntheticProgramText(State.range(0), 8);
  for (auto _ : State) {
    llvm::Expected<ParsedProgram> P = parseProgramText(Text, "synthetic.coll");
    if (!P) {
      State.SkipWithError(llvm::toString(P.takeError()).c_str());
      return;
    }
    DiagnosticEngine Diags(P->Source.get());
    if (llvm::Error E = verifyProgram(*P->Prog, Diags)) {
      State.SkipWithError(llvm::toString(std::move(E)).c_str());
      return;
    }
    benchmark::DoNotOptimize(P->Prog->ops().data());
  }
  State.counters["ops"] = double(State.range(0));
  State.counters["MB"] = double(Text.size()) / 1e6;
  State.SetBytesProcessed(int64_t(State.iterations()) * int64_t(Text.size()));
}
BENCHMARK(BM_ParseAndVerify)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond);

static void BM_Print(benchmark::State &State) {
  std::string Text = bench::syntheticProgramText(State.range(0), 8);
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, "synthetic.coll");
  if (!P) {
    State.SkipWithError(llvm::toString(P.takeError()).c_str());
    return;
  }
  for (auto _ : State) {
    std::string Out = printProgram(*P->Prog);
    benchmark::DoNotOptimize(Out.data());
  }
}
BENCHMARK(BM_Print)->Arg(1000000)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
