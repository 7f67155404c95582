//===- tests/bench/CompileScaling.cpp - Is compile linear on every shape? -===//
//
// Compiles each shape of SyntheticProgram.h at two sizes (100k and 1M ops by
// default) as `collc compile -o FILE` does (parse, the default pipeline with
// the shape's bucket policy, lowering, the plan written to a file), and prints a table with the
// seconds of each and the ratio time(large)/time(small). Linear compile
// keeps the ratio near large/small (10); the goal is <= 12 on every shape,
// and under 5 s for 1M ops. A benchmark, not a test: a smoke run in ctest
// only keeps it working.
//
//   collc_compile_scaling [--ops SMALL,LARGE] [--shape NAME]
//
//===----------------------------------------------------------------------===//

#include "SyntheticProgram.h"

#include "compiler/Compile.h"
#include "plan/Plan.h"
#include "ir/Parser.h"
#include "tools/collc/BatchMalloc.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace collc;

namespace {

/// Seconds to compile \p Text to a plan file, or an error.
llvm::Expected<double> compileSeconds(const std::string &Text, llvm::StringRef BucketPolicy) {
  auto Start = std::chrono::steady_clock::now();
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, "scaling.coll");
  if (!P)
    return P.takeError();
  DiagnosticEngine Diags(P->Source.get());
  llvm::Expected<std::string> Bucket = bucketPassFor(BucketPolicy);
  if (!Bucket)
    return Bucket.takeError();
  CompileOptions Opts;
  Opts.Pipeline = defaultPipeline(*Bucket);
  Opts.PM.CheckUnchanged = false;
  llvm::Expected<plan::Plan> Plan = compileProgram(*P->Prog, Opts, Diags, llvm::nulls());
  if (!Plan)
    return Plan.takeError();
  llvm::SmallString<128> Path;
  int FD;
  if (std::error_code EC = llvm::sys::fs::createTemporaryFile("collc-scaling", "plan", FD, Path))
    return llvm::createStringError(EC, "cannot create a temporary plan file");
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    plan::writePlan(*Plan, OS);
  }
  llvm::sys::fs::remove(Path);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
}

} // namespace

int main(int argc, char **argv) {
  tuneMallocForBatchWork(); // as collc itself does
  int64_t Small = 100000, Large = 1000000;
  llvm::StringRef Only;
  for (int I = 1; I < argc; I += 2) {
    llvm::StringRef Flag = argv[I];
    if (I + 1 == argc || (Flag != "--ops" && Flag != "--shape")) {
      llvm::errs() << "usage: collc_compile_scaling [--ops SMALL,LARGE] [--shape NAME]\n";
      return 2;
    }
    if (Flag == "--shape") {
      Only = argv[I + 1];
      if (llvm::none_of(bench::AllShapes, [&](bench::Shape S) { return Only == bench::shapeName(S); })) {
        llvm::errs() << "--shape " << Only << ": expected one-tensor, distinct, groups, "
                        "rank-dependent or auto\n";
        return 2;
      }
      continue;
    }
    auto [A, B] = llvm::StringRef(argv[I + 1]).split(',');
    if (A.getAsInteger(10, Small) || B.getAsInteger(10, Large) || Small <= 0 || Large <= Small) {
      llvm::errs() << "--ops " << argv[I + 1] << ": expected SMALL,LARGE with 0 < SMALL < LARGE\n";
      return 2;
    }
  }
  llvm::outs() << llvm::formatv("{0,15} {1,10} {2,10} {3,10} {4,10} {5,7}\n", "shape", "small",
                                "s", "large", "s", "ratio");
  bool Ok = true;
  for (bench::Shape S : bench::AllShapes) {
    if (!Only.empty() && Only != bench::shapeName(S))
      continue;
    double Seconds[2];
    int64_t Ops[2] = {Small, Large};
    for (int K = 0; K != 2; ++K) {
      llvm::Expected<double> T =
          compileSeconds(bench::shapeProgramText(S, Ops[K]), bench::shapeBucketPolicy(S));
      if (!T) {
        llvm::errs() << bench::shapeName(S) << " at " << Ops[K]
                     << " ops: " << llvm::toString(T.takeError()) << '\n';
        return 1;
      }
      Seconds[K] = *T;
    }
    double Ratio = Seconds[1] / Seconds[0];
    Ok &= Ratio <= 1.2 * double(Large) / double(Small);
    llvm::outs() << llvm::formatv("{0,15} {1,10} {2,10:f3} {3,10} {4,10:f3} {5,7:f2}\n",
                                  bench::shapeName(S), Small, Seconds[0], Large, Seconds[1],
                                  Ratio);
  }
  llvm::outs() << llvm::formatv("# ratio = time(large) / time(small); linear is {0:f1}, the goal "
                                "is at most {1:f1} on every shape: {2}\n",
                                double(Large) / double(Small), 1.2 * double(Large) / double(Small),
                                Ok ? "met" : "NOT met");
  return 0;
}
