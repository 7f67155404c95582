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

#include <chrono>
#include <cmath>
#include <thread>

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

/// A small all_reduce combines partials lower rank first on every rank
/// (GlooSmallAllReduce.h), so min and max ties keep rank 0's value as the
/// reference does, in any world: +0 against -0 shows which one was kept.
/// The suite's data has no such ties and accepts any order, so this is the
/// check (at 3 processes, of the ranks folded in first too).
TEST(GlooSmallAllReduce, MinAndMaxTiesKeepTheLowerRanksValue) {
  using D = rt::gloo::GlooDriver;
  const auto &S = DriverHarness<D>::setup();
  if (!S.Why.empty())
    GTEST_SKIP() << S.Why;
  llvm::Expected<D::UniqueId> Id = D::groupId({"ties"});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  llvm::Expected<D::Communicator> C = D::join(*Id, size_t(S.Place.World), size_t(S.Place.Rank));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::StreamOwner Stream = D::createStream("ties");
  for (ReduceOp Op : {ReduceOp::Min, ReduceOp::Max}) {
    // Element 0: rank 0 holds +0, the others -0; element 1 the other way.
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

/// A rank that joined but never calls the all_reduce: the rank that
/// exchanges with it first (in the fold, or in the first doubling step)
/// waits for it, and the timeout names it; every other member fails too
/// rather than hang. The missing rank keeps its pairs open past the
/// others' deadline, so that they time out instead of seeing it leave.
/// The others wait twice as long as the first partner: a member that
/// times out closes its pairs, and one that did so first (it waited for
/// the first partner) would be found gone by the first partner's probe
/// and named instead; with equal timeouts that is a race (docs/runtime.md).
TEST(GlooSmallAllReduce, TheRankWaitingForAMissingOneNamesIt) {
  using D = rt::gloo::GlooDriver;
  const auto &S = DriverHarness<D>::setup();
  if (!S.Why.empty())
    GTEST_SKIP() << S.Why;
  int World = int(S.Place.World), Rank = int(S.Place.Rank), Missing = World - 1;
  llvm::Expected<D::UniqueId> Id = D::groupId({"missing"});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  llvm::Expected<D::Communicator> C = D::join(*Id, size_t(World), size_t(Rank));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  int Doubling = 1;
  while (Doubling <= World / 2)
    Doubling *= 2;
  int FirstPartner = Missing >= Doubling ? Missing - Doubling : Missing ^ 1;
  constexpr std::chrono::milliseconds Timeout(1500);
  D::setTimeout(*C, Rank == FirstPartner ? Timeout : 2 * Timeout);
  if (Rank == Missing) {
    std::this_thread::sleep_for(4 * Timeout);
    return;
  }
  D::StreamOwner Stream = D::createStream("missing");
  std::vector<float> Data(2, 1.0f);
  auto Res = D::resource(Data.data(), Data.size() * 4);
  auto Start = std::chrono::steady_clock::now();
  ASSERT_FALSE(
      bool(D::allReduce(*C, Res, Res, {ElemType::F32, 2}, ReduceOp::Sum, D::streamOf(Stream))));
  llvm::Error E = D::synchronize(D::streamOf(Stream));
  ASSERT_TRUE(bool(E)) << "rank " << Rank << ": the all_reduce succeeded without rank " << Missing;
  EXPECT_LT(std::chrono::steady_clock::now() - Start, 4 * Timeout + std::chrono::seconds(5));
  int64_t Peer = -1;
  rt::ErrorKind Kind = rt::ErrorKind::Backend;
  std::string Text;
  llvm::handleAllErrors(
      std::move(E),
      [&](const rt::RuntimeError &R) {
        Peer = R.peer();
        Kind = R.kind();
        Text = R.text();
      },
      [&](const llvm::ErrorInfoBase &B) { Text = B.message(); });
  if (Rank == FirstPartner) {
    EXPECT_EQ(Kind, rt::ErrorKind::Timeout) << Text;
    EXPECT_EQ(Peer, Missing) << Text;
    EXPECT_NE(Text.find(llvm::formatv("rank {0} did not arrive", Missing).str()), std::string::npos)
        << Text;
  }
  // Then leave after the missing rank does, not before: a member that left
  // would be the next lost peer of those still waiting.
  std::this_thread::sleep_until(Start + 4 * Timeout);
}

} // namespace collc::test

using GlooHarness = collc::test::DriverHarness<collc::rt::gloo::GlooDriver>;
COLLC_CONFORMANCE_SUITE(GlooHarness, GlooConformance);
