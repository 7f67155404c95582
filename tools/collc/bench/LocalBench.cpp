//===- tools/collc/bench/LocalBench.cpp - Measurements for collc bench ---------===//

#include "tools/collc/bench/LocalBench.h"

#include "runtime/local/LocalExecutor.h"
#include "runtime/local/LocalDriver.h"
#include "runtime/verify/SyntheticData.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sched.h>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace collc::rt {

using D = local::LocalDriver;
using Clock = std::chrono::steady_clock;

/// Each measurement runs in batches; a batch counts as its slowest rank's
/// mean, and the median batch is reported, so one descheduled batch on a
/// shared machine does not decide the figure. The MPI bench does the same.
static constexpr int Batches = 5;

static double medianOfSlowest(const std::vector<std::vector<double>> &Times) {
  std::vector<double> Slowest;
  for (const std::vector<double> &Batch : Times)
    Slowest.push_back(*std::max_element(Batch.begin(), Batch.end()));
  std::sort(Slowest.begin(), Slowest.end());
  return Slowest[Slowest.size() / 2];
}

/// Pins the calling thread to the \p Index-th CPU this process may use, as
/// mpirun binds each rank to a core (the MPI rows run with --bind-to core):
/// two ranks that the scheduler leaves on one core spin against each other.
/// When ranks outnumber CPUs nothing is pinned.
static void pinToCpu(int Index, int Count) {
  cpu_set_t Allowed;
  if (sched_getaffinity(0, sizeof(Allowed), &Allowed) != 0 || CPU_COUNT(&Allowed) < Count)
    return;
  for (int Cpu = 0, Seen = 0; Cpu != CPU_SETSIZE; ++Cpu) {
    if (!CPU_ISSET(Cpu, &Allowed) || Seen++ != Index)
      continue;
    cpu_set_t One;
    CPU_ZERO(&One);
    CPU_SET(Cpu, &One);
    sched_setaffinity(0, sizeof(One), &One); // best effort: unpinned still works
    return;
  }
}

static std::string uniqueName(StringRef What) {
  static std::atomic<unsigned> Counter{0};
  return formatv("bench.{0}.{1}.{2}", What, getpid(), Counter++).str();
}

Expected<double> timeLocalAllReduce(int Ranks, uint64_t Bytes, double BudgetSec) {
  Expected<D::UniqueId> Id = D::groupId({uniqueName("allreduce")});
  if (!Id)
    return Id.takeError();
  uint64_t Count = Bytes / 4;
  std::vector<std::vector<double>> Times(Batches, std::vector<double>(Ranks, 0.0));
  std::mutex ErrorLock;
  std::string Failure;
  std::barrier Sync(Ranks);
  std::atomic<long> Iters{0};
  auto Main = [&](int R) {
    auto Fail = [&](Error E) {
      std::lock_guard<std::mutex> L(ErrorLock);
      Failure = toString(std::move(E));
    };
    Expected<D::Communicator> C = D::join(*Id, Ranks, R);
    if (!C)
      return Fail(C.takeError());
    D::StreamOwner S = D::createStream("bench");
    pinToCpu(R, Ranks); // after the stream: its worker may run anywhere
    std::vector<float> Src(std::max<uint64_t>(Count, 1), float(R + 1)), Dst(Src.size());
    auto Src_ = D::resource(Src.data(), Count * 4), Dst_ = D::resource(Dst.data(), Count * 4);
    D::Elems E{ElemType::F32, Count};
    auto Once = [&]() -> Error {
      if (Error Err = D::allReduce(*C, Src_, Dst_, E, ReduceOp::Sum, S.get()))
        return Err;
      return D::synchronize(S.get());
    };
    // Warm up and calibrate on rank 0's measurement.
    for (int K = 0; K != 3; ++K)
      if (Error Err = Once())
        return Fail(std::move(Err));
    Sync.arrive_and_wait();
    auto T0 = Clock::now();
    if (Error Err = Once())
      return Fail(std::move(Err));
    double One = std::chrono::duration<double>(Clock::now() - T0).count();
    if (R == 0)
      Iters = std::clamp(long(BudgetSec / Batches / std::max(One, 1e-7)), 3L, 100000L);
    Sync.arrive_and_wait();
    long N = Iters.load();
    for (int B = 0; B != Batches; ++B) {
      Sync.arrive_and_wait();
      T0 = Clock::now();
      for (long K = 0; K != N; ++K)
        if (Error Err = Once())
          return Fail(std::move(Err));
      Times[B][R] =
          std::chrono::duration<double, std::micro>(Clock::now() - T0).count() / double(N);
    }
  };
  std::vector<std::thread> Threads;
  for (int R = 0; R != Ranks; ++R)
    Threads.emplace_back(Main, R);
  for (std::thread &T : Threads)
    T.join();
  if (!Failure.empty())
    return makeError(ErrorKind::Backend, Failure);
  return medianOfSlowest(Times);
}

double timeParallelMemcpy(int Threads, uint64_t Bytes, double BudgetSec) {
  Bytes = std::max<uint64_t>(Bytes, 8);
  std::vector<std::vector<char>> Src(Threads), Dst(Threads);
  for (int T = 0; T != Threads; ++T) {
    Src[T].assign(Bytes, char(T));
    Dst[T].assign(Bytes, 0);
  }
  std::barrier Sync(Threads);
  std::vector<std::vector<double>> Times(Batches, std::vector<double>(Threads, 0.0));
  std::atomic<long> Iters{0};
  auto Main = [&](int T) {
    pinToCpu(T, Threads);
    std::memcpy(Dst[T].data(), Src[T].data(), Bytes);
    Sync.arrive_and_wait();
    auto T0 = Clock::now();
    std::memcpy(Dst[T].data(), Src[T].data(), Bytes);
    double One = std::chrono::duration<double>(Clock::now() - T0).count();
    if (T == 0)
      Iters = std::clamp(long(BudgetSec / Batches / std::max(One, 1e-8)), 3L, 1000000L);
    Sync.arrive_and_wait();
    long N = Iters.load();
    for (int B = 0; B != Batches; ++B) {
      Sync.arrive_and_wait();
      T0 = Clock::now();
      for (long K = 0; K != N; ++K) {
        std::memcpy(Dst[T].data(), Src[T].data(), Bytes);
        asm volatile("" ::: "memory"); // keep every copy
      }
      Times[B][T] =
          std::chrono::duration<double, std::micro>(Clock::now() - T0).count() / double(N);
    }
  };
  std::vector<std::thread> Ts;
  for (int T = 0; T != Threads; ++T)
    Ts.emplace_back(Main, T);
  for (std::thread &T : Ts)
    T.join();
  return medianOfSlowest(Times);
}

Expected<double> timePlanReplay(const plan::Plan &P, unsigned Steps, bool Record) {
  int64_t World = P.World;
  ExecutorOptions Opts;
  Opts.CommPrefix = uniqueName("replay");
  Opts.Record.On = Record;
  std::vector<std::vector<double>> Times(World);
  std::vector<std::string> Errors(World);
  auto Main = [&](int64_t R) {
    pinToCpu(int(R), int(World));
    Expected<std::unique_ptr<Executor>> X = createLocalExecutor(P, R, Opts);
    if (!X) {
      Errors[R] = toString(X.takeError());
      return;
    }
    if (Error E = (*X)->bindOwnMemory()) {
      Errors[R] = toString(std::move(E));
      return;
    }
    if (Error E = (*X)->capture()) {
      Errors[R] = toString(std::move(E));
      return;
    }
    // The model's compute is not what is measured: it does nothing.
    auto NoCompute = [](const plan::Compute &, uint32_t) { return Error::success(); };
    for (unsigned S = 0; S != Steps + 1; ++S) {
      auto T0 = Clock::now();
      if (Error E = (*X)->replay(NoCompute)) {
        Errors[R] = toString(std::move(E));
        return;
      }
      if (S) // the first step warms up
        Times[R].push_back(std::chrono::duration<double, std::micro>(Clock::now() - T0).count());
    }
  };
  std::vector<std::thread> Threads;
  for (int64_t R = 0; R != World; ++R)
    Threads.emplace_back(Main, R);
  for (std::thread &T : Threads)
    T.join();
  for (const std::string &E : Errors)
    if (!E.empty())
      return makeError(ErrorKind::Backend, E);
  // Per step, the slowest rank; then the median step.
  std::vector<double> PerStep(Steps, 0.0);
  for (unsigned S = 0; S != Steps; ++S)
    for (int64_t R = 0; R != World; ++R)
      PerStep[S] = std::max(PerStep[S], Times[R][S]);
  std::sort(PerStep.begin(), PerStep.end());
  return PerStep[Steps / 2];
}

Expected<RecordCost> timeRecordCost(const plan::Plan &P, unsigned Steps, unsigned Rounds) {
  std::vector<double> On, Off;
  for (unsigned R = 0; R != Rounds; ++R)
    for (bool Record : {true, false}) {
      Expected<double> T = timePlanReplay(P, Steps, Record);
      if (!T)
        return T.takeError();
      (Record ? On : Off).push_back(*T);
    }
  std::sort(On.begin(), On.end());
  std::sort(Off.begin(), Off.end());
  return RecordCost{On[On.size() / 2], Off[Off.size() / 2]};
}

Expected<double> timePlanReplayFor(const plan::Plan &P, double BudgetSec) {
  Expected<double> Probe = timePlanReplay(P, 3);
  if (!Probe)
    return Probe.takeError();
  double Steps = BudgetSec * 1e6 / std::max(*Probe, 1.0);
  return timePlanReplay(P, unsigned(std::clamp(Steps, 5.0, 1000.0)));
}

} // namespace collc::rt
