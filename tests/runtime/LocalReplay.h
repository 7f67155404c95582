//===- tests/runtime/LocalReplay.h - A plan replayed on local ranks -*- C++ -*-===//
//
// Every rank of a plan as a thread of this process on the local backend:
// each binds memory of its own, captures, replays with the model's
// computes writing synthetic data, and the reference checker compares every
// rank's results. Shared by the executor's tests and the rank-conditional
// cases (JointCasesTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_RUNTIME_LOCALREPLAY_H
#define COLLC_TESTS_RUNTIME_LOCALREPLAY_H

#include "tests/runtime/RuntimeTestUtil.h"

#include "runtime/local/LocalExecutor.h"
#include "runtime/verify/PlanChecker.h"
#include "runtime/verify/SyntheticData.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace collc::test {

/// One rank's executor, its own memory for tensors that are not views, and
/// what failed on it ("" when nothing).
struct RankRun {
  std::unique_ptr<rt::Executor> X;
  std::vector<std::vector<char>> Storage;
  std::string Error;
};

inline rt::ExecutorOptions optionsFor(const char *What) {
  rt::ExecutorOptions O;
  O.CommPrefix = freshName(What);
  O.Timeout = std::chrono::milliseconds(10000);
  return O;
}

inline llvm::Error bindAll(const plan::Plan &P, RankRun &Run) {
  for (const std::string &Name : Run.X->unboundTensors()) {
    uint32_t T = 0;
    while (P.Tensors[T].Name != Name)
      ++T;
    Run.Storage.emplace_back(P.Tensors[T].Type.bytes(), 0);
    if (llvm::Error E = Run.X->bind(Name, Run.Storage.back().data(), Run.Storage.back().size()))
      return E;
  }
  return llvm::Error::success();
}

/// Replays \p Steps steps of \p Plans[R] on every rank.
inline std::vector<RankRun> runAll(const std::vector<const plan::Plan *> &Plans, unsigned Steps,
                                   rt::ExecutorOptions Opts) {
  int World = int(Plans.size());
  std::vector<RankRun> Runs(World);
  onThreads(World, [&](int R) {
    const plan::Plan &P = *Plans[R];
    RankRun &Run = Runs[R];
    llvm::Expected<std::unique_ptr<rt::Executor>> X = rt::createLocalExecutor(P, R, Opts);
    if (!X) {
      Run.Error = llvm::toString(X.takeError());
      return;
    }
    Run.X = std::move(*X);
    llvm::Error E = bindAll(P, Run);
    if (!E)
      E = Run.X->capture();
    // Only what this rank's comms touch has memory here: the rest of a
    // compute's outputs are the model's own.
    std::vector<uint8_t> Touched(P.Tensors.size(), 0);
    for (uint32_t T : Run.X->touchedTensors())
      Touched[T] = 1;
    for (unsigned S = 0; S != Steps && !E; ++S)
      E = Run.X->replay([&](const plan::Compute &C, uint32_t) -> llvm::Error {
        for (uint32_t T : C.Outputs) {
          if (!Touched[T])
            continue;
          llvm::Expected<llvm::MutableArrayRef<char>> M = Run.X->tensor(P.Tensors[T].Name);
          if (!M)
            return M.takeError();
          rt::fillSynthetic(P, T, R, *M);
        }
        return llvm::Error::success();
      });
    if (E)
      Run.Error = llvm::toString(std::move(E));
  });
  return Runs;
}

/// Every rank's results against the reference.
inline llvm::Expected<rt::CheckSummary> check(const plan::Plan &P, std::vector<RankRun> &Runs,
                                              const rt::CheckOptions &Opts = {}) {
  return rt::checkPlanResults(
      P,
      [&](int64_t R, uint32_t T) -> llvm::ArrayRef<char> {
        llvm::Expected<llvm::MutableArrayRef<char>> M = Runs[R].X->tensor(P.Tensors[T].Name);
        if (!M) {
          llvm::consumeError(M.takeError());
          return {};
        }
        return *M;
      },
      Opts);
}

} // namespace collc::test

#endif
