//===- tests/runtime/MpiAdaptersTest.cpp - The interface adapters on `mpi` ------===//
//
// The interface adapters on the mpi backend, one process per rank: ctest runs
// this binary under `mpirun -np 2` and `-np 4` (label mpi). Its main holds
// the MpiSession. The server's group of devices {0, 1} is the world at 2
// processes and refused as Unsupported at 4 (mpi builds other groups only
// by a split every process calls).
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/ProcessAdaptersSuite.h"

#include "runtime/mpi/MpiAdapters.h"
#include "runtime/mpi/MpiSession.h"

#include <mpi.h>

namespace {

struct MpiSeeds {
  using Session = collc::rt::MpiDistributedSession;
  static constexpr bool ServerSubgroups = false;
  static std::string name() { return "mpi"; }
  static int rank() {
    int R = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    return R;
  }
  static int world() {
    int N = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &N);
    return N;
  }
  static auto communicator(llvm::StringRef Name, size_t Size, size_t Rank) {
    return collc::rt::createMpiCommunicator(Name, Size, Rank);
  }
  static std::unique_ptr<collc::rt::ServerCommunication> server(collc::rt::DeviceId D) {
    return std::make_unique<collc::rt::MpiServer>(D);
  }
};

COLLC_PROCESS_ADAPTER_TESTS(MpiSeeds, MpiAdapters)

TEST(MpiAdapters, AGroupOtherThanTheWorldIsRefusedByName) {
  // The communicator and the session are the world; any other size is
  // refused before any communication, naming both.
  auto C = collc::rt::createMpiCommunicator("half", 1, 0);
  ASSERT_FALSE(bool(C));
  collc::test::ErrorFacts F = collc::test::factsOf(C.takeError());
  EXPECT_NE(F.Text.find("come from split"), std::string::npos) << F.Text;
}

} // namespace

int main(int Argc, char **Argv) {
  auto Session = collc::rt::mpi::MpiSession::start();
  if (!Session) {
    fprintf(stderr, "%s\n", llvm::toString(Session.takeError()).c_str());
    return 1;
  }
  ::testing::InitGoogleTest(&Argc, Argv);
  if (MpiSeeds::rank() != 0) { // one listing; every rank still fails the run
    auto &Listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete Listeners.Release(Listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
