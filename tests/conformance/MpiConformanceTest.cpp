//===- tests/conformance/MpiConformanceTest.cpp - The conformance suite on `mpi` -===//
//
// The driver conformance suite on the MPI driver, one process per rank:
// ctest runs this binary under `mpirun -np 2` and `-np 4`. Each process runs
// its own rank of every case and checks that rank's results; the world is
// MPI_COMM_WORLD's size. Its own main holds the MpiSession (MPI is
// initialized before the first test and finalized after the last).
//
// The driver is the mpi backend's (runtime/mpi/MpiShmDriver.h): with
// COLLC_TRANSPORT=engine every group on Open MPI; by default every group in
// shared memory (all processes on this host), or hierarchical where
// COLLC_PSEUDO_HOST splits them into pseudo-hosts (CMakeLists.txt runs
// each).
//
// Float reductions: MPI does not accumulate in rank order, nor does the
// hierarchical all_reduce (each host's partial first); they are compared
// within the summation bound.
//
//===----------------------------------------------------------------------===//

#include "tests/conformance/ConformanceSuite.h"

#include "runtime/mpi/MpiSession.h"
#include "runtime/mpi/MpiShmDriver.h"

#include <mpi.h>

namespace collc::test {

template <> struct DriverHarness<rt::mpi::MpiShmDriver> {
  using Driver = rt::mpi::MpiShmDriver;
  static std::string name() { return "mpi"; }
  static int worldRank() {
    int R = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    return R;
  }
  static int worldSize() {
    int N = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &N);
    return N;
  }
  /// The processes mpirun started.
  static std::vector<int> worlds() { return {worldSize()}; }
  static std::string unavailable() { return ""; }
  static bool runsRank(int R) { return R == worldRank(); }
  /// MPI's algorithms combine ranks in their own order: float reductions
  /// are compared within the summation bound (runtime/verify/ReductionBound.h);
  /// narrow floats are widened to f32 by the driver, as the reference does.
  static constexpr bool RankOrderedReductions = false;

  using Buffer = HostBuffer;

  /// Only this process's rank runs here; the others run in their processes.
  static void runRanks(int World, llvm::function_ref<void(int)> Body) {
    int Me = worldRank();
    if (Me < World)
      Body(Me);
  }
};

} // namespace collc::test

using MpiHarness = collc::test::DriverHarness<collc::rt::mpi::MpiShmDriver>;
COLLC_CONFORMANCE_SUITE(MpiHarness, MpiConformance);

int main(int Argc, char **Argv) {
  llvm::Expected<std::unique_ptr<collc::rt::mpi::MpiSession>> Session =
      collc::rt::mpi::MpiSession::start();
  if (!Session) {
    fprintf(stderr, "%s\n", llvm::toString(Session.takeError()).c_str());
    return 1;
  }
  ::testing::InitGoogleTest(&Argc, Argv);
  // Only rank 0 prints the listing; every rank still reports its failures.
  if (MpiHarness::worldRank() != 0) {
    auto &Listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete Listeners.Release(Listeners.default_result_printer());
  }
  int Result = RUN_ALL_TESTS();
  // A rank whose test failed must fail the run: mpirun reports the worst
  // exit status.
  return Result;
}
