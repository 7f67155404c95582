//===- tools/collc/bench/HostLoad.h - How busy the host was -----*- C++ -*-===//
//
// What `collc bench --backend mpi|gloo` prints beside its figures so that a
// reader can tell a slow backend from a busy host: the load average, and
// how long this process's threads were ready to run but waited for a CPU
// (Linux's run delay, /proc/self/task/*/schedstat: the time a thread spent
// on a run queue). On a host with fewer cores than busy threads, that wait
// is what makes one iteration take milliseconds and the next microseconds.
// And the CPU time this process used (all its threads: the caller's, the
// transport's, the comm streams'), which a busy host does not stretch as it
// stretches wall time. Where the kernel does not tell (no /proc, no
// schedstat), these are absent.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_HOSTLOAD_H
#define COLLC_TOOLS_COLLC_BENCH_HOSTLOAD_H

#include <optional>
#include <string>

namespace collc::tool {

/// The run delay of every thread of this process so far, in microseconds
/// (threads that have ended no longer count).
std::optional<double> runQueueDelayUs();

/// The CPU time of every thread of this process so far, in microseconds.
std::optional<double> processCpuUs();

/// The 1, 5 and 15 minute load averages, "1.23 0.98 0.50".
std::optional<std::string> loadAverages();

} // namespace collc::tool

#endif
