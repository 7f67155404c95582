//===- tests/conformance/ShmConformanceTest.cpp - The suite on the shm transport -===//
//
// The driver conformance suite on the shared-memory transport, its ranks
// threads of this process and its bootstrap the local driver's
// (ShmDriver<LocalDriver>): every op, type and reduction through the
// team's segments, with operands in private memory (staged: the suite's
// buffers are its own vectors), on every path of the team (32-byte
// mailboxes, 1 KiB inline, large, and the large size past the staging
// buffer in rounds where COLLC_CONFORMANCE_BIG_BYTES asks for it).
//
// COLLC_TEST_PSEUDO_HOSTS=K puts the ranks on K pseudo-hosts (consecutive
// ranks share one; runtime/shm/HostIdentity.h's PseudoHostScope), so that
// groups whose hosts hold as many ranks each take the hierarchical path
// (its all_reduce: within each host in shared memory, across hosts on the
// local driver). Its float sums then add in another order than the
// reference (each host's partial first; narrow floats still accumulate in
// f32 and round once): those are checked within the summation bound.
// Everything else, and every reduction on one host, is bit for bit.
//
//===----------------------------------------------------------------------===//

#include "tests/conformance/ConformanceSuite.h"

#include "runtime/shm/HostIdentity.h"
#include "runtime/shm/ShmDriver.h"

#include <cstdlib>

namespace collc::test {

using ShmLocalDriver = rt::shm::ShmDriver<rt::local::LocalDriver>;
static_assert(rt::ExecutorDriver<ShmLocalDriver>);

/// The pseudo-hosts the ranks are spread over (1: one host).
inline int pseudoHosts() {
  const char *V = getenv("COLLC_TEST_PSEUDO_HOSTS");
  return V ? std::max(1, atoi(V)) : 1;
}

template <> struct DriverHarness<ShmLocalDriver> {
  using Driver = ShmLocalDriver;
  static std::string name() { return "shm"; }
  static std::vector<int> worlds() { return {1, 2, 3, 4, 8}; }
  static std::string unavailable() { return ""; }
  /// One host: the local backend's algorithms, in rank order. Several:
  /// the hierarchical all_reduce (see above).
  static inline const bool RankOrderedReductions = pseudoHosts() == 1;

  using Buffer = HostBuffer;

  static void runRanks(int World, llvm::function_ref<void(int)> Body) {
    int Hosts = std::min(pseudoHosts(), World);
    std::vector<std::thread> Threads;
    for (int R = 0; R != World; ++R)
      Threads.emplace_back([&Body, R, World, Hosts] {
        rt::shm::PseudoHostScope Host("h" + std::to_string(R * Hosts / World));
        Body(R);
      });
    for (std::thread &T : Threads)
      T.join();
  }
};

} // namespace collc::test

using ShmHarness = collc::test::DriverHarness<collc::test::ShmLocalDriver>;
COLLC_CONFORMANCE_SUITE(ShmHarness, ShmConformance);
