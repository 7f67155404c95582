//===- tools/collc/LocalRun.cpp - A plan run on local ranks, checked -------===//

#include "tools/collc/LocalRun.h"

#include "runtime/local/LocalExecutor.h"
#include "runtime/verify/SyntheticData.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>

using namespace llvm;

namespace collc::tool {

ArrayRef<char> HostView::operator()(uint32_t T) {
  const plan::Plan &P = X.plan();
  if (X.memory() == rt::MemoryKind::Host) {
    Expected<MutableArrayRef<char>> M = X.tensor(P.Tensors[T].Name);
    if (!M) {
      consumeError(M.takeError());
      return {};
    }
    return *M;
  }
  auto It = Copies.find(T);
  if (It == Copies.end()) {
    std::vector<char> Host(P.Tensors[T].Type.bytes());
    if (Error E = X.copyOut(T, Host)) {
      consumeError(std::move(E));
      return {};
    }
    It = Copies.emplace(T, std::move(Host)).first;
  }
  return It->second;
}

uint64_t bytesMovedByRank(const plan::Plan &P, int64_t R) {
  uint64_t Bytes = 0;
  for (const plan::Comm &C : P.Comms)
    if (const plan::CommSide *S = C.sideOn(R))
      Bytes += C.Kind == plan::CommKind::Recv ? S->outputBytes(P.Tensors) : S->inputBytes(P.Tensors);
  return Bytes;
}

void runRank(const plan::Plan &P, rt::Executor &X, unsigned Steps, bool Trace,
             LocalRun::Rank &Res, const InjectedFault *Fault) {
  int64_t R = X.rank();
  auto Fail = [&](Error E) { Res.Error = toString(std::move(E)); };
  // Memory of the executor's own for tensors that are not views.
  if (Error Err = X.bindOwnMemory())
    return Fail(std::move(Err));
  std::vector<uint8_t> Touched(P.Tensors.size(), 0);
  for (uint32_t T : X.touchedTensors())
    Touched[T] = 1;
  Res.BytesMoved = bytesMovedByRank(P, R);
  if (Error Err = X.capture())
    return Fail(std::move(Err));
  // Where the tensors are not host memory, each output is made on the host
  // and copied in.
  bool InPlace = X.memory() == rt::MemoryKind::Host;
  std::vector<char> Staged;
  // An injected fault's step (the second, or the only one), and the
  // computes a step calls, counted in the first.
  unsigned FaultStep = std::min(1u, Steps - 1), Step = 0;
  size_t Computes = 0, Called = 0;
  auto Compute = [&](const plan::Compute &C, uint32_t) -> Error {
    if (Step == 0)
      ++Computes;
    if (Fault && Step == FaultStep && Called++ == Computes / 2)
      Fault->at(FaultPoint::MidStep, R);
    for (uint32_t T : C.Outputs) {
      if (!Touched[T])
        continue;
      if (!InPlace) {
        Staged.resize(P.Tensors[T].Type.bytes());
        rt::fillSynthetic(P, T, R, Staged);
        if (Error E = X.copyIn(T, Staged))
          return E;
        continue;
      }
      Expected<MutableArrayRef<char>> Mem = X.tensor(P.Tensors[T].Name);
      if (!Mem)
        return Mem.takeError();
      rt::fillSynthetic(P, T, R, *Mem);
    }
    return Error::success();
  };
  for (unsigned S = 0; S != Steps; ++S) {
    Step = S;
    if (Fault && S == FaultStep && S != 0)
      Fault->at(FaultPoint::BetweenSteps, R);
    if (Trace)
      X.clearTrace();
    auto Start = std::chrono::steady_clock::now();
    if (Error Err = X.replay(Compute))
      return Fail(std::move(Err));
    if (Error Err = X.synchronize())
      return Fail(std::move(Err));
    Res.StepUs.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - Start)
            .count());
  }
}

LocalRun runOnLocalRanks(const plan::Plan &P, const rt::ExecutorOptions &Opts, unsigned Steps) {
  int64_t World = P.World;
  LocalRun Run;
  Run.Ranks.resize(World);
  Run.Execs.resize(World);
  // Every rank makes its executor (its threads: a limit on threads,
  // processes or memory fails it there; joining a local group waits for no
  // one), then waits at the gate until every rank has: the steps run only
  // when all could start, so that no rank waits out its timeout for one
  // that never came.
  std::mutex M;
  std::condition_variable CV;
  int64_t Ready = 0, Started = 0;
  bool Open = false, Go = true;
  auto RankMain = [&](int64_t R) {
    Expected<std::unique_ptr<rt::Executor>> E = rt::createLocalExecutor(P, R, Opts);
    {
      std::unique_lock<std::mutex> L(M);
      if (E)
        Run.Execs[R] = std::move(*E);
      else
        Run.Ranks[R].Error = toString(E.takeError());
      Go &= bool(Run.Execs[R]);
      ++Ready;
      CV.notify_all();
      CV.wait(L, [&] { return Open; });
      if (!Go)
        return;
    }
    runRank(P, *Run.Execs[R], Steps, Opts.Trace, Run.Ranks[R]);
  };
  std::vector<std::thread> Threads;
  for (int64_t R = 0; R != World; ++R) {
    try {
      Threads.emplace_back(RankMain, R);
    } catch (const std::system_error &E) {
      Run.Ranks[R].Error = formatv("cannot start the thread of rank {0} of {1}: {2} (a limit on "
                                   "threads, processes or memory)",
                                   R, World, E.what());
      break;
    }
  }
  {
    std::unique_lock<std::mutex> L(M);
    Started = int64_t(Threads.size());
    CV.wait(L, [&] { return Ready == Started; });
    Go &= Started == World;
    Open = true;
    CV.notify_all();
  }
  for (std::thread &T : Threads)
    T.join();
  return Run;
}

Expected<rt::CheckSummary> checkLocalRun(const plan::Plan &P, const LocalRun &Run) {
  std::vector<HostView> Views;
  for (const std::unique_ptr<rt::Executor> &X : Run.Execs)
    Views.emplace_back(*X);
  return rt::checkPlanResults(P, [&](int64_t R, uint32_t T) { return Views[R](T); });
}

} // namespace collc::tool
