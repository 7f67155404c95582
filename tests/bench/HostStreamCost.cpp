//===- tests/bench/HostStreamCost.cpp - What a host comm stream costs a rank -===//
//
// Two costs of runtime/exec/HostStream that no backend's table shows:
//  - polling: a polled task (an MPI request) is started and its peer is
//    late; the issuing thread computes (a busy loop) while the worker polls.
//    Prints the CPU the process spent beside the computing thread's own
//    (the worker's polling), and how long after the "peer" arrived the
//    worker saw the task finish (what the polling buys: progress while the
//    rank computes);
//  - waiting: a thread waits while the worker runs a task that blocks (the
//    mpi driver's gated all_reduce); prints the waiter's CPU during the
//    wait (it yields up to 1 ms, then sleeps) and how long after the task
//    ended the wait returned.
// Each figure is the median of --reps. Run it pinned to one core
// (`taskset -c 0`) for a rank bound by mpirun, or unpinned for ranks that
// outnumber cores. A benchmark, not a test: a smoke run in ctest only keeps
// it working.
//
//   collc_hoststream_cost [--late-ms L] [--compute-ms C] [--block-ms B] [--reps N]
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/HostStream.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

using namespace collc::rt;
using Clock = std::chrono::steady_clock;

namespace {

double cpuUs(clockid_t Which) {
  timespec T{};
  clock_gettime(Which, &T);
  return double(T.tv_sec) * 1e6 + double(T.tv_nsec) / 1e3;
}

double usSince(Clock::time_point T0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - T0).count();
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

struct Options {
  int LateMs = 50, ComputeMs = 100, BlockMs = 5, Reps = 7;
};

bool parse(int Argc, char **Argv, Options &O) {
  for (int I = 1; I < Argc; ++I) {
    llvm::StringRef A = Argv[I];
    int *Into = A == "--late-ms"      ? &O.LateMs
                : A == "--compute-ms" ? &O.ComputeMs
                : A == "--block-ms"   ? &O.BlockMs
                : A == "--reps"       ? &O.Reps
                                      : nullptr;
    if (!Into || I + 1 == Argc || (*Into = std::atoi(Argv[++I])) <= 0) {
      llvm::errs() << "collc_hoststream_cost: bad argument '" << A
                   << "' (expected --late-ms, --compute-ms, --block-ms or --reps, each with a "
                      "positive integer)\n";
      return false;
    }
  }
  if (O.LateMs >= O.ComputeMs) {
    llvm::errs() << llvm::formatv("collc_hoststream_cost: --late-ms {0} must be less than "
                                  "--compute-ms {1} (the peer arrives during the compute)\n",
                                  O.LateMs, O.ComputeMs);
    return false;
  }
  return true;
}

/// The worker polls a started task while this thread computes.
void polling(const Options &O) {
  std::vector<double> WorkerCpu, Noticed, Share;
  volatile uint64_t X = 1;
  for (int R = 0; R != O.Reps; ++R) {
    HostStream S("cost");
    std::atomic<bool> Arrived{false};
    std::atomic<double> DoneAtUs{-1};
    Clock::time_point T0 = Clock::now();
    S.enqueue([&](HostStream::Poll &Q) -> llvm::Error {
      Q.More = !Arrived.load(std::memory_order_acquire); // one MPI_Test
      if (!Q.More)
        DoneAtUs = usSince(T0);
      return llvm::Error::success();
    });
    S.kick(); // as the executor flushes an async launch before a compute
    double P0 = cpuUs(CLOCK_PROCESS_CPUTIME_ID), M0 = cpuUs(CLOCK_THREAD_CPUTIME_ID);
    double ArrivedAtUs = -1, Now = 0;
    while ((Now = usSince(T0)) < O.ComputeMs * 1e3) {
      for (int I = 0; I != 1000; ++I)
        X = X * 6364136223846793005ull + 1;
      if (ArrivedAtUs < 0 && Now >= O.LateMs * 1e3) {
        ArrivedAtUs = Now;
        Arrived.store(true, std::memory_order_release);
      }
    }
    double P1 = cpuUs(CLOCK_PROCESS_CPUTIME_ID), M1 = cpuUs(CLOCK_THREAD_CPUTIME_ID);
    if (ArrivedAtUs < 0) { // this thread slept through the whole compute
      ArrivedAtUs = Now;
      Arrived.store(true, std::memory_order_release);
    }
    if (llvm::Error E = S.synchronize())
      llvm::consumeError(std::move(E));
    WorkerCpu.push_back((P1 - P0) - (M1 - M0));
    // Not seen during the compute: seen by the wait after it.
    Noticed.push_back(DoneAtUs.load() - ArrivedAtUs);
    Share.push_back((M1 - M0) / Now);
  }
  llvm::outs() << llvm::formatv(
      "polling: a started task whose peer arrives {0} ms into a {1} ms compute: worker CPU "
      "{2:f0} us ({3:f2}% of the compute); finish seen {4:f1} us after the peer; the computing "
      "thread ran {5:f1}% of its wall time\n",
      O.LateMs, O.ComputeMs, median(WorkerCpu), median(WorkerCpu) / (O.ComputeMs * 10.0),
      median(Noticed), 100 * median(Share));
}

/// This thread waits while the worker runs a task that blocks.
void waiting(const Options &O) {
  std::vector<double> WaiterCpu, Late;
  for (int R = 0; R != O.Reps; ++R) {
    HostStream S("cost");
    std::atomic<double> EndedAtUs{-1};
    Clock::time_point T0 = Clock::now();
    S.enqueue([&]() -> llvm::Error {
      std::this_thread::sleep_for(std::chrono::milliseconds(O.BlockMs)); // a blocking call
      EndedAtUs = usSince(T0);
      return llvm::Error::success();
    });
    S.kick();
    // Let the worker take it (its wake-up is tens of us), so that this
    // thread finds it running.
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    double M0 = cpuUs(CLOCK_THREAD_CPUTIME_ID);
    if (llvm::Error E = S.synchronize())
      llvm::consumeError(std::move(E));
    double ReturnedAtUs = usSince(T0);
    WaiterCpu.push_back(cpuUs(CLOCK_THREAD_CPUTIME_ID) - M0);
    Late.push_back(ReturnedAtUs - EndedAtUs.load());
  }
  llvm::outs() << llvm::formatv("waiting: a wait while the worker runs a {0} ms blocking task: "
                                "waiter CPU {1:f0} us; returned {2:f1} us after the task ended\n",
                                O.BlockMs, median(WaiterCpu), median(Late));
}

} // namespace

int main(int Argc, char **Argv) {
  Options O;
  if (!parse(Argc, Argv, O))
    return 2;
  polling(O);
  waiting(O);
  return 0;
}
