//===- tests/conformance/DriverHarness.h - What a backend gives the suite -*- C++ -*-===//
//
// The conformance suite is written once over a harness: the driver, the
// world sizes the backend can run, memory the driver can use (host vectors
// for `local`, device memory for `nccl`), and a way to run one body per rank
// at once (threads here; one rank per GPU elsewhere). A backend joins the
// suite by specializing DriverHarness and instantiating the suite with it
// (see ConformanceSuite.h).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_CONFORMANCE_DRIVERHARNESS_H
#define COLLC_TESTS_CONFORMANCE_DRIVERHARNESS_H

#include "runtime/exec/HostDriverChecks.h"
#include "runtime/local/LocalDriver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <thread>
#include <vector>

namespace collc::test {

template <typename D> struct DriverHarness;

/// Memory a host driver (local, mpi, gloo) reads and writes; the suite fills
/// and checks it through host copies.
class HostBuffer {
public:
  explicit HostBuffer(uint64_t Bytes) : Host(Bytes) {}
  rt::HostResource resource(uint64_t Offset = 0) {
    return rt::HostResource{Host.data() + Offset, Host.size() - Offset};
  }
  void write(llvm::ArrayRef<char> Data, uint64_t Offset = 0) {
    std::copy(Data.begin(), Data.end(), Host.begin() + Offset);
  }
  std::vector<char> read() const { return Host; }
  uint64_t size() const { return Host.size(); }

private:
  std::vector<char> Host;
};

template <> struct DriverHarness<rt::local::LocalDriver> {
  using Driver = rt::local::LocalDriver;
  static std::string name() { return "local"; }
  static std::vector<int> worlds() { return {1, 2, 3, 4, 5, 8}; }
  /// Why the backend cannot run here ("" when it can).
  static std::string unavailable() { return ""; }

  using Buffer = HostBuffer;

  /// Runs \p Body(rank) for every rank at once and returns when all did (a
  /// harness with one process per rank runs its own and says which with
  /// `static bool runsRank(int)`).
  static void runRanks(int World, llvm::function_ref<void(int)> Body) {
    std::vector<std::thread> Threads;
    for (int R = 0; R != World; ++R)
      Threads.emplace_back([&Body, R] { Body(R); });
    for (std::thread &T : Threads)
      T.join();
  }
};

} // namespace collc::test

#endif
