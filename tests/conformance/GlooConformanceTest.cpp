//===- tests/conformance/GlooConformanceTest.cpp - The suite on `gloo` -----===//
//
// The driver conformance suite on the gloo backend, one rank per process:
// run it under a launcher (tests/launch/spawn_ranks.py -n N, or torchrun,
// mpirun, srun) with COLLC_RENDEZVOUS=file:DIR|redis://HOST:PORT. Each
// process runs its own rank of every test and checks only that rank's
// results; the world is the launcher's. Started alone, every case says why
// it skipped.
//
//===----------------------------------------------------------------------===//

#include "tests/conformance/ConformanceSuite.h"

#include "runtime/gloo/GlooDriver.h"
#include "runtime/gloo/GlooStore.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

#include <cmath>

namespace collc::test {

template <> struct DriverHarness<rt::gloo::GlooDriver> {
  using Driver = rt::gloo::GlooDriver;

  /// This process's place and rendezvous, or why there is none.
  struct Setup {
    rt::ProcessPlace Place;
    std::string Why;
  };
  static const Setup &setup() {
    static const Setup S = [] {
      Setup S;
      llvm::Expected<rt::ProcessPlace> Place = rt::placeFromLauncher();
      if (!Place) {
        S.Why = "not started by a launcher (tests/launch/spawn_ranks.py): " +
                llvm::toString(Place.takeError());
        return S;
      }
      S.Place = *Place;
      std::optional<std::string> Where = rt::processEnvironment("COLLC_RENDEZVOUS");
      if (!Where) {
        S.Why = "COLLC_RENDEZVOUS is not set (file:DIR or redis://HOST:PORT)";
        return S;
      }
      llvm::Expected<rt::RendezvousAddress> Address = rt::parseRendezvous(*Where);
      llvm::Error E = Address ? rt::gloo::configureRendezvous(*Address) : Address.takeError();
      if (E)
        S.Why = "COLLC_RENDEZVOUS: " + llvm::toString(std::move(E));
      return S;
    }();
    return S;
  }

  static std::string name() { return "gloo"; }
  /// Gloo's ring combines ranks in its own order (with two ranks the driver
  /// puts them in rank order, but the suite's trait is one for all worlds);
  /// narrow floats travel as f32 and round once (GlooReduction.h).
  static constexpr bool RankOrderedReductions = false;
  static constexpr bool NarrowAccumulatesInF32 = true;
  static std::vector<int> worlds() {
    return setup().Why.empty() ? std::vector<int>{int(setup().Place.World)} : std::vector<int>{2};
  }
  static std::string unavailable() { return setup().Why; }
  static bool runsRank(int R) { return R == setup().Place.Rank; }

  using Buffer = HostBuffer;

  /// Only this process's rank runs here; the others run in their processes.
  static void runRanks(int World, llvm::function_ref<void(int)> Body) {
    if (World == setup().Place.World)
      Body(int(setup().Place.Rank));
  }
};

/// With two ranks the driver hands Gloo's reduce function the operands in
/// rank order (GlooDriver.cpp), so min and max ties keep rank 0's value as
/// the reference does: +0 against -0 shows which one was kept. The suite's
/// data has no such ties and accepts any order, so this is the check.
TEST(GlooTwoRanks, MinAndMaxTiesKeepTheLowerRanksValue) {
  using D = rt::gloo::GlooDriver;
  const auto &S = DriverHarness<D>::setup();
  if (!S.Why.empty())
    GTEST_SKIP() << S.Why;
  if (S.Place.World != 2)
    GTEST_SKIP() << "the driver orders operands for two ranks (world " << S.Place.World << ")";
  llvm::Expected<D::UniqueId> Id = D::groupId({"ties"});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  llvm::Expected<D::Communicator> C = D::join(*Id, 2, size_t(S.Place.Rank));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::StreamOwner Stream = D::createStream("ties");
  for (ReduceOp Op : {ReduceOp::Min, ReduceOp::Max}) {
    // Element 0: rank 0 holds +0, rank 1 -0; element 1 the other way.
    float Zero = 0.0f, NegZero = -0.0f;
    std::vector<float> Data = S.Place.Rank == 0 ? std::vector<float>{Zero, NegZero}
                                                : std::vector<float>{NegZero, Zero};
    auto Res = D::resource(Data.data(), Data.size() * 4);
    ASSERT_FALSE(bool(D::allReduce(*C, Res, Res, {ElemType::F32, 2}, Op, D::streamOf(Stream))));
    llvm::Error E = D::synchronize(D::streamOf(Stream));
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_FALSE(std::signbit(Data[0])) << reduceOpName(Op).str() << ": rank 0's +0 was not kept";
    EXPECT_TRUE(std::signbit(Data[1])) << reduceOpName(Op).str() << ": rank 0's -0 was not kept";
  }
}

} // namespace collc::test

using GlooHarness = collc::test::DriverHarness<collc::rt::gloo::GlooDriver>;
COLLC_CONFORMANCE_SUITE(GlooHarness, GlooConformance);
