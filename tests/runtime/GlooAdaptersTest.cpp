//===- tests/runtime/GlooAdaptersTest.cpp - The interface adapters on `gloo` ----===//
//
// The interface adapters on the gloo backend, one rank per process: ctest starts
// 2 processes (file: rendezvous) and 4 (a redis-server of the spawner's
// own) through tests/launch/spawn_ranks.py (label gloo). Gloo joins any
// group by name, so the server's group of devices {0, 1} is built at 4
// processes too. Started alone, the process's main says why and exits 1.
//
//===----------------------------------------------------------------------===//

#include "tests/launch/LaunchedRank.h"
#include "tests/runtime/ProcessAdaptersSuite.h"

#include "runtime/gloo/GlooAdapters.h"
#include "runtime/gloo/GlooStore.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

namespace {

collc::rt::ProcessPlace Place;

struct GlooSeeds {
  using Session = collc::rt::GlooSession;
  static constexpr bool ServerSubgroups = true;
  static std::string name() { return "gloo"; }
  static int rank() { return int(Place.Rank); }
  static int world() { return int(Place.World); }
  static auto communicator(llvm::StringRef Name, size_t Size, size_t Rank) {
    return collc::rt::createGlooCommunicator(Name, Size, Rank);
  }
  static std::unique_ptr<collc::rt::ServerCommunication> server(collc::rt::DeviceId D) {
    return std::make_unique<collc::rt::GlooServer>(D);
  }
};

COLLC_PROCESS_ADAPTER_TESTS(GlooSeeds, GlooAdapters)

} // namespace

int main(int Argc, char **Argv) {
  llvm::Expected<collc::test::LaunchedRank> Me = collc::test::launchedRank();
  llvm::Error E = Me ? collc::rt::gloo::configureRendezvous(Me->Where) : Me.takeError();
  if (E) {
    fprintf(stderr, "start under tests/launch/spawn_ranks.py: %s\n",
            llvm::toString(std::move(E)).c_str());
    return 1;
  }
  Place = Me->Place;
  ::testing::InitGoogleTest(&Argc, Argv);
  return RUN_ALL_TESTS();
}
