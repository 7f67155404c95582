//===- tests/bench/CompileScaling.cpp - Is compile linear on every shape? -===//
//
// Compiles each shape of SyntheticProgram.h at two sizes (100k and 1M ops by
// default) as `collc compile -o FILE` does (parse, the default pipeline with
// the shape's bucket policy, lowering, the plan written to a file), and prints
// a row per compile: the seconds of each phase and in all, the peak resident
// memory, and on the large row the ratio time(large)/time(small). Linear
// compile keeps the ratio near large/small (10); the goals (issue 35) are a
// ratio of at most 12 on every shape, 1M ops under 3 s and under 1 GB. Each
// compile runs in a process of its own, so its peak memory is its own and no
// compile inherits another's heap. A benchmark, not a test: a smoke run in
// ctest only keeps it working.
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
#include <cstdio>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace collc;

namespace {

/// One compile's phases in seconds, its processor time (user and system:
/// what load on a shared machine inflates least) and its peak resident memory.
struct CompileFigures {
  double Parse = 0, Passes = 0, Lowering = 0, Writing = 0;
  double CpuSeconds = 0, PeakMiB = 0;
  double total() const { return Parse + Passes + Lowering + Writing; }
};

using Clock = std::chrono::steady_clock;
double since(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

/// Compiles \p Text to a plan file, timing each phase.
llvm::Expected<CompileFigures> compileTimed(const std::string &Text,
                                            llvm::StringRef BucketPolicy) {
  CompileFigures F;
  auto Start = Clock::now();
  llvm::Expected<ParsedProgram> P = parseProgramText(Text, "scaling.coll");
  if (!P)
    return P.takeError();
  F.Parse = since(Start);
  DiagnosticEngine Diags(P->Source.get());
  llvm::Expected<std::string> Bucket = bucketPassFor(BucketPolicy);
  if (!Bucket)
    return Bucket.takeError();
  CompileOptions Opts;
  Opts.Pipeline = defaultPipeline(*Bucket);
  Opts.PM.CheckUnchanged = false;
  CompilePhaseSeconds Phases;
  Opts.Phases = &Phases;
  llvm::Expected<plan::Plan> Plan = compileProgram(*P->Prog, Opts, Diags, llvm::nulls());
  if (!Plan)
    return Plan.takeError();
  F.Passes = Phases.Passes;
  F.Lowering = Phases.Lowering;
  auto Writing = Clock::now();
  llvm::SmallString<128> Path;
  int FD;
  if (std::error_code EC = llvm::sys::fs::createTemporaryFile("collc-scaling", "plan", FD, Path))
    return llvm::createStringError(EC, "cannot create a temporary plan file");
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    plan::writePlan(*Plan, OS);
  }
  F.Writing = since(Writing);
  llvm::sys::fs::remove(Path);
  return F;
}

/// Compiles \p NumOps ops of shape \p S in a child process (the program
/// text is made there too, as a file read by `collc compile` would be held):
/// its figures, with the child's peak resident memory, or an error.
llvm::Expected<CompileFigures> compileInChild(bench::Shape S, int64_t NumOps) {
  int Pipe[2];
  if (::pipe(Pipe) != 0)
    return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                   "cannot create a pipe for the compile's figures");
  pid_t Child = ::fork();
  if (Child < 0) {
    ::close(Pipe[0]);
    ::close(Pipe[1]);
    return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                   "cannot fork a process for the compile");
  }
  if (Child == 0) {
    ::close(Pipe[0]);
    llvm::Expected<CompileFigures> F =
        compileTimed(bench::shapeProgramText(S, NumOps), bench::shapeBucketPolicy(S));
    if (!F) {
      llvm::errs() << bench::shapeName(S) << " at " << NumOps
                   << " ops: " << llvm::toString(F.takeError()) << '\n';
      llvm::errs().flush();
      ::_exit(1);
    }
    bool Sent = ::write(Pipe[1], &*F, sizeof(*F)) == ssize_t(sizeof(*F));
    ::_exit(Sent ? 0 : 1);
  }
  ::close(Pipe[1]);
  CompileFigures F;
  ssize_t Got = ::read(Pipe[0], &F, sizeof(F));
  ::close(Pipe[0]);
  int Status = 0;
  struct rusage Usage {};
  while (::wait4(Child, &Status, 0, &Usage) < 0 && errno == EINTR)
    continue;
  if (Got != ssize_t(sizeof(F)) || !WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
    return llvm::createStringError(std::make_error_code(std::errc::io_error),
                                   "the compile of %s at %lld ops failed (status %d)",
                                   bench::shapeName(S), (long long)NumOps, Status);
  auto Seconds = [](const timeval &T) { return double(T.tv_sec) + double(T.tv_usec) / 1e6; };
  F.CpuSeconds = Seconds(Usage.ru_utime) + Seconds(Usage.ru_stime);
  F.PeakMiB = double(Usage.ru_maxrss) / 1024.0; // Linux reports KiB
  return F;
}

void printRow(llvm::StringRef Shape, int64_t Ops, const CompileFigures &F, double Ratio) {
  llvm::outs() << llvm::formatv("{0,15} {1,9} {2,7:f3} {3,7:f3} {4,7:f3} {5,7:f3} {6,8:f3} "
                                "{7,7:f3} {8,8:f0}",
                                Shape, Ops, F.Parse, F.Passes, F.Lowering, F.Writing, F.total(),
                                F.CpuSeconds, F.PeakMiB);
  if (Ratio > 0)
    llvm::outs() << llvm::formatv(" {0,6:f2}", Ratio);
  llvm::outs() << '\n';
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
  llvm::outs() << llvm::formatv("{0,15} {1,9} {2,7} {3,7} {4,7} {5,7} {6,8} {7,7} {8,8} {9,6}\n",
                                "shape", "ops", "parse", "passes", "lower", "write", "total s",
                                "cpu s", "peak MiB", "ratio");
  double RatioGoal = 1.2 * double(Large) / double(Small);
  bool RatioMet = true;
  double WorstLarge = 0, WorstPeakMiB = 0;
  for (bench::Shape S : bench::AllShapes) {
    if (!Only.empty() && Only != bench::shapeName(S))
      continue;
    CompileFigures Figures[2];
    int64_t Ops[2] = {Small, Large};
    for (int K = 0; K != 2; ++K) {
      llvm::Expected<CompileFigures> F = compileInChild(S, Ops[K]);
      if (!F) {
        llvm::errs() << llvm::toString(F.takeError()) << '\n';
        return 1;
      }
      Figures[K] = *F;
    }
    double Ratio = Figures[1].total() / Figures[0].total();
    RatioMet &= Ratio <= RatioGoal;
    WorstLarge = std::max(WorstLarge, Figures[1].total());
    WorstPeakMiB = std::max(WorstPeakMiB, Figures[1].PeakMiB);
    printRow(bench::shapeName(S), Small, Figures[0], 0);
    printRow(bench::shapeName(S), Large, Figures[1], Ratio);
  }
  llvm::outs() << "# phases and total: wall seconds in the compiling process; cpu s: its user "
                  "and system time, program generation included (on a loaded machine the wall "
                  "figures are inflated, cpu s much less)\n";
  llvm::outs() << llvm::formatv("# ratio = total(large) / total(small); linear is {0:f1}, the goal "
                                "is at most {1:f1} on every shape: {2}\n",
                                double(Large) / double(Small), RatioGoal,
                                RatioMet ? "met" : "NOT met");
  llvm::outs() << llvm::formatv("# at {0} ops: slowest {1:f3} s (goal under 3 s for 1M), largest "
                                "peak {2:f0} MiB (goal under 1024 MiB for 1M)\n",
                                Large, WorstLarge, WorstPeakMiB);
  return 0;
}
