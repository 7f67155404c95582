//===- tests/conformance/GlooConformanceTest.cpp - The suite on `gloo` -----===//
//
// The driver conformance suite on the gloo backend's driver
// (runtime/gloo/GlooShmDriver.h: every group in shared memory where its
// processes share a host, hierarchical over pseudo-hosts, on Gloo with
// COLLC_TRANSPORT=engine; CMakeLists.txt runs each), one rank per process:
// run it under a launcher (tests/launch/spawn_ranks.py -n N, or torchrun,
// mpirun, srun) with COLLC_RENDEZVOUS=file:DIR|redis://HOST:PORT. Each
// process runs its own rank of every test and checks only that rank's
// results; the world is the launcher's. Started alone, every case says why
// it skipped.
//
//===----------------------------------------------------------------------===//

#include "tests/conformance/ConformanceSuite.h"

#include "runtime/gloo/GlooDriver.h"
#include "runtime/gloo/GlooShmDriver.h"
#include "runtime/gloo/GlooSmallAllReduce.h"
#include "runtime/gloo/GlooStore.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

#include "llvm/Support/MathExtras.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

namespace collc::test {

template <> struct DriverHarness<rt::gloo::GlooShmDriver> {
  using Driver = rt::gloo::GlooShmDriver;

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

/// A small all_reduce combines partials in rank order on every rank
/// (GlooSmallAllReduce.h), so min and max ties keep the lowest tied rank's
/// value as the reference does, in any world: +0 against -0 shows which
/// one was kept. The suite's data has no such ties and accepts any order,
/// so this is the check. Elements 0 and 1 tie rank 0 with all the others;
/// in elements 2 and 3 rank 0 holds no extreme and rank 1 ties the rest,
/// which a fold out of rank order (rank 2 into rank 0 first, at 3
/// processes) gets wrong.
TEST(GlooSmallAllReduce, MinAndMaxTiesKeepTheLowerRanksValue) {
  using D = rt::gloo::GlooDriver;
  const auto &S = DriverHarness<rt::gloo::GlooShmDriver>::setup();
  if (!S.Why.empty())
    GTEST_SKIP() << S.Why;
  llvm::Expected<D::UniqueId> Id = D::groupId({"ties"});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  llvm::Expected<D::Communicator> C = D::join(*Id, size_t(S.Place.World), size_t(S.Place.Rank));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::StreamOwner Stream = D::createStream("ties");
  for (ReduceOp Op : {ReduceOp::Min, ReduceOp::Max}) {
    float Zero = 0.0f, NegZero = -0.0f, NoExtreme = Op == ReduceOp::Min ? 1.0f : -1.0f;
    int64_t R = S.Place.Rank;
    std::vector<float> Data = {R == 0 ? Zero : NegZero, R == 0 ? NegZero : Zero,
                               R == 0   ? NoExtreme
                               : R == 1 ? NegZero
                                        : Zero,
                               R == 0   ? NoExtreme
                               : R == 1 ? Zero
                                        : NegZero};
    auto Res = D::resource(Data.data(), Data.size() * 4);
    ASSERT_FALSE(
        bool(D::allReduce(*C, Res, Res, {ElemType::F32, Data.size()}, Op, D::streamOf(Stream))));
    llvm::Error E = D::synchronize(D::streamOf(Stream));
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    std::string Name = reduceOpName(Op).str();
    EXPECT_FALSE(std::signbit(Data[0])) << Name << ": rank 0's +0 was not kept";
    EXPECT_TRUE(std::signbit(Data[1])) << Name << ": rank 0's -0 was not kept";
    EXPECT_TRUE(std::signbit(Data[2]) && Data[2] == 0) << Name << ": rank 1's -0 was not kept";
    EXPECT_TRUE(!std::signbit(Data[3]) && Data[3] == 0) << Name << ": rank 1's +0 was not kept";
  }
}

/// Just below the small all_reduce's limit (doubling) and at it (Gloo's
/// ring), floats whose sum depends on the order of the additions: every
/// rank ends with the same bits (its hash, gathered), within rounding of
/// the exact sum; below the limit, the bits of the rank-ordered tree
/// (runs of consecutive ranks, GlooSmallAllReduce.h), which another fold
/// order or grouping would miss.
TEST(GlooSmallAllReduce, BothSidesOfTheLimitGiveEveryRankTheSameBits) {
  using D = rt::gloo::GlooDriver;
  const auto &S = DriverHarness<rt::gloo::GlooShmDriver>::setup();
  if (!S.Why.empty())
    GTEST_SKIP() << S.Why;
  int World = int(S.Place.World), Rank = int(S.Place.Rank);
  llvm::Expected<D::UniqueId> Id = D::groupId({"limit"});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  llvm::Expected<D::Communicator> C = D::join(*Id, size_t(World), size_t(Rank));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::StreamOwner Stream = D::createStream("limit");
  auto Value = [](int R, uint64_t I) {
    return float((R % 2 ? -1.0 : 1.0) * 1e7 * (R + 1) + double(I % 1000) * 0.37 * (R + 1));
  };
  // The sum of Value(R, I) over all ranks as doubling adds it: neighbours
  // folded first, then adjacent runs pairwise, lower first.
  auto Tree = [&](uint64_t I) {
    int Doubling = int(llvm::PowerOf2Floor(uint64_t(World)));
    int Folded = 2 * (World - Doubling);
    std::vector<float> Level;
    for (int R = 0; R < World; R += R < Folded ? 2 : 1)
      Level.push_back(R < Folded ? Value(R, I) + Value(R + 1, I) : Value(R, I));
    while (Level.size() > 1) {
      std::vector<float> Next;
      for (size_t J = 0; J != Level.size(); J += 2)
        Next.push_back(Level[J] + Level[J + 1]);
      Level = Next;
    }
    return Level[0];
  };
  uint64_t Limit = rt::gloo::smallAllReduceBytes(World);
  for (uint64_t Count : {Limit / 4 - 1, Limit / 4}) {
    std::vector<float> Data(Count);
    for (uint64_t I = 0; I != Count; ++I)
      Data[I] = Value(Rank, I);
    auto Res = D::resource(Data.data(), Count * 4);
    ASSERT_FALSE(bool(
        D::allReduce(*C, Res, Res, {ElemType::F32, Count}, ReduceOp::Sum, D::streamOf(Stream))));
    llvm::Error Reduced = D::synchronize(D::streamOf(Stream));
    ASSERT_FALSE(bool(Reduced)) << llvm::toString(std::move(Reduced));
    uint64_t Hash = 1469598103934665603ull;
    for (float V : Data) {
      uint32_t Bits;
      std::memcpy(&Bits, &V, 4);
      Hash = (Hash ^ Bits) * 1099511628211ull;
    }
    std::vector<uint32_t> Mine = {uint32_t(Hash), uint32_t(Hash >> 32)}, All(2 * World);
    ASSERT_FALSE(
        bool(D::allGather(*C, D::resource(Mine.data(), 8), D::resource(All.data(), 8 * World),
                          {ElemType::U32, 2}, D::streamOf(Stream))));
    llvm::Error E = D::synchronize(D::streamOf(Stream));
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    for (int R = 1; R != World; ++R)
      EXPECT_TRUE(All[2 * R] == All[0] && All[2 * R + 1] == All[1])
          << Count << " elements: rank " << R << "'s result differs from rank 0's in some bits";
    for (uint64_t I = 0; I != Count; ++I) {
      double Exact = 0;
      for (int R = 0; R != World; ++R)
        Exact += double(Value(R, I));
      ASSERT_NEAR(Data[I], Exact, 1e7 * World * World * 1e-6)
          << Count << " elements, element " << I;
      if (Count * 4 < Limit) {
        ASSERT_EQ(Data[I], Tree(I)) << Count << " elements, element " << I;
      }
    }
  }
}

/// A rank that joined but never calls the all_reduce: the rank that
/// exchanges with it first (in the first doubling step; the last rank is
/// never folded in) waits for it, and the timeout names it; every other member fails too
/// rather than hang. The missing rank keeps its pairs open past the
/// others' deadline, so that they time out instead of seeing it leave.
/// All start together (a barrier), and the others wait three times as long
/// as the first partner: a member that times out closes its pairs, and one
/// that did so first (it waited for the first partner) would be found gone
/// by the first partner's probe and named instead; with equal timeouts
/// that is a race (docs/runtime.md).
TEST(GlooSmallAllReduce, TheRankWaitingForAMissingOneNamesIt) {
  using D = rt::gloo::GlooDriver;
  const auto &S = DriverHarness<rt::gloo::GlooShmDriver>::setup();
  if (!S.Why.empty())
    GTEST_SKIP() << S.Why;
  int World = int(S.Place.World), Rank = int(S.Place.Rank), Missing = World - 1;
  llvm::Expected<D::UniqueId> Id = D::groupId({"missing"});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  llvm::Expected<D::Communicator> C = D::join(*Id, size_t(World), size_t(Rank));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  int Doubling = int(llvm::PowerOf2Floor(uint64_t(World)));
  // GlooSmallAllReduce.cpp's numbering: the last rank is never folded in.
  int Extra = World - Doubling;
  auto RankOf = [&](int Virtual) { return Virtual < Extra ? 2 * Virtual : Virtual + Extra; };
  int FirstPartner = RankOf((Missing - Extra) ^ 1);
  constexpr std::chrono::milliseconds Timeout(1000);
  D::StreamOwner Stream = D::createStream("missing");
  ASSERT_FALSE(bool(D::barrier(*C, D::streamOf(Stream))));
  llvm::Error Met = D::synchronize(D::streamOf(Stream));
  ASSERT_FALSE(bool(Met)) << llvm::toString(std::move(Met));
  // After the barrier, which waits for the slowest join with the default.
  D::setTimeout(*C, Rank == FirstPartner ? Timeout : 3 * Timeout);
  auto Start = std::chrono::steady_clock::now();
  if (Rank == Missing) {
    std::this_thread::sleep_until(Start + 5 * Timeout);
    return;
  }
  std::vector<float> Data(2, 1.0f);
  auto Res = D::resource(Data.data(), Data.size() * 4);
  ASSERT_FALSE(
      bool(D::allReduce(*C, Res, Res, {ElemType::F32, 2}, ReduceOp::Sum, D::streamOf(Stream))));
  llvm::Error E = D::synchronize(D::streamOf(Stream));
  ASSERT_TRUE(bool(E)) << "rank " << Rank << ": the all_reduce succeeded without rank " << Missing;
  EXPECT_LT(std::chrono::steady_clock::now() - Start, 3 * Timeout + std::chrono::seconds(5));
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
    EXPECT_NE(Text.find(llvm::formatv("rank {0} did not answer", Missing).str()), std::string::npos)
        << Text;
  }
  // Then leave after the missing rank does, not before: a member that left
  // would be the next lost peer of those still waiting.
  std::this_thread::sleep_until(Start + 5 * Timeout);
}

} // namespace collc::test

using GlooHarness = collc::test::DriverHarness<collc::rt::gloo::GlooShmDriver>;
COLLC_CONFORMANCE_SUITE(GlooHarness, GlooConformance);
