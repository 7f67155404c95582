//===- tests/runtime/FaultTest.cpp - Lost, late and wrong ranks ------------===//
//
// Fault injection in the local driver: a killed rank (silently, as after a
// crash, or loudly), a delayed rank, a rank that posts the wrong size. The
// survivors must get an error naming the culprit within the timeout (twice
// it at most), nothing hangs, and the data is not half-written.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/RuntimeTestUtil.h"

#include "runtime/local/LocalDriver.h"

#include "gtest/gtest.h"

#include <chrono>

using namespace collc;
using namespace collc::rt;
using namespace collc::test;
using D = local::LocalDriver;
using Clock = std::chrono::steady_clock;
using llvm::Error;
using llvm::Expected;
using std::chrono::milliseconds;

namespace {

class FaultTest : public testing::Test {
protected:
  void TearDown() override { local::setFaultPlan(std::nullopt); }

  /// Every rank runs \p Ops all_reduces of 1024 floats (blocking each), with
  /// \p Timeout per operation. Returns each rank's first error and how long
  /// the failing operation took.
  struct Outcome {
    ErrorFacts Failure;
    int FailedAt = -1;
    double FailedAfterMs = 0;
    ErrorFacts HealthAfter;
    ErrorFacts NextOp;
    double NextOpMs = 0;
  };
  std::vector<Outcome> run(const std::string &Name, int World, int Ops, milliseconds Timeout,
                           uint64_t Count = 1024) {
    std::vector<Outcome> Out(World);
    Expected<D::UniqueId> Id = D::groupId({Name});
    EXPECT_TRUE(bool(Id));
    onThreads(World, [&](int R) {
      Expected<D::Communicator> C = D::join(*Id, World, R);
      ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
      D::setTimeout(*C, Timeout);
      D::StreamOwner S = D::createStream("fault");
      std::vector<float> Buf(Count, 1.0f);
      auto Res = D::resource(Buf.data(), Count * 4);
      for (int K = 0; K != Ops; ++K) {
        auto T0 = Clock::now();
        Error E = D::allReduce(*C, Res, Res, {ElemType::F32, Count}, ReduceOp::Sum, S.get());
        if (!E)
          E = D::synchronize(S.get());
        if (E) {
          Out[R].Failure = factsOf(std::move(E));
          Out[R].FailedAt = K;
          Out[R].FailedAfterMs =
              std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
          break;
        }
      }
      Out[R].HealthAfter = factsOf(D::health(*C));
      // A broken communicator refuses at once instead of hanging again.
      auto T0 = Clock::now();
      Error Again = D::allReduce(*C, Res, Res, {ElemType::F32, Count}, ReduceOp::Sum, S.get());
      if (!Again)
        Again = D::synchronize(S.get());
      Out[R].NextOp = factsOf(std::move(Again));
      Out[R].NextOpMs = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
    });
    return Out;
  }
};

TEST_F(FaultTest, SilentlyKilledRankIsNamedBySurvivorsWithinTwiceTheTimeout) {
  std::string Name = freshName("kill.silent");
  local::FaultPlan F;
  F.GroupName = Name;
  F.KillRank = 2;
  F.KillAtOp = 3; // mid-step: after two good operations
  F.KillSilently = true;
  local::setFaultPlan(F);
  // Long enough that a loaded machine's scheduling delays stay well inside
  // the "twice the timeout" the survivors are held to.
  const milliseconds Timeout(1000);
  std::vector<Outcome> Out = run(Name, 4, 6, Timeout);
  for (int R = 0; R != 4; ++R) {
    SCOPED_TRACE("rank " + std::to_string(R));
    ASSERT_TRUE(Out[R].Failure.Failed);
    EXPECT_EQ(Out[R].FailedAt, 2);
    EXPECT_EQ(Out[R].Failure.Peer, 2) << Out[R].Failure.Text;
    EXPECT_NE(Out[R].Failure.Text.find("rank 2"), std::string::npos) << Out[R].Failure.Text;
    if (R == 2)
      continue; // the killed rank itself
    EXPECT_EQ(Out[R].Failure.Kind, ErrorKind::Timeout) << Out[R].Failure.Text;
    EXPECT_LT(Out[R].FailedAfterMs, 2.0 * double(Timeout.count()))
        << "survivors must report the lost rank within twice the timeout";
    EXPECT_TRUE(Out[R].HealthAfter.Failed) << "health() must report the broken group";
    EXPECT_NE(Out[R].HealthAfter.Text.find("rank 2"), std::string::npos) << Out[R].HealthAfter.Text;
    EXPECT_TRUE(Out[R].NextOp.Failed);
    EXPECT_EQ(Out[R].NextOp.Kind, ErrorKind::Broken) << Out[R].NextOp.Text;
    EXPECT_LT(Out[R].NextOpMs, 0.5 * double(Timeout.count()))
        << "a broken communicator must refuse, not wait";
  }
}

TEST_F(FaultTest, LoudlyKilledRankIsReportedAtOnce) {
  std::string Name = freshName("kill.loud");
  local::FaultPlan F;
  F.GroupName = Name;
  F.KillRank = 0;
  F.KillAtOp = 2;
  F.KillSilently = false;
  local::setFaultPlan(F);
  const milliseconds Timeout(20000); // long: the survivors must not need it
  std::vector<Outcome> Out = run(Name, 3, 4, Timeout);
  for (int R = 1; R != 3; ++R) {
    SCOPED_TRACE("rank " + std::to_string(R));
    ASSERT_TRUE(Out[R].Failure.Failed);
    // PeerLost if the op was waiting when rank 0 died, Broken if it
    // started after: either way it blames rank 0.
    EXPECT_TRUE(Out[R].Failure.Kind == ErrorKind::PeerLost ||
                Out[R].Failure.Kind == ErrorKind::Broken)
        << Out[R].Failure.Text;
    EXPECT_EQ(Out[R].Failure.Peer, 0);
    EXPECT_NE(Out[R].Failure.Text.find("rank 0"), std::string::npos) << Out[R].Failure.Text;
    EXPECT_LT(Out[R].FailedAfterMs, 5000.0);
    EXPECT_EQ(Out[R].HealthAfter.Peer, 0) << Out[R].HealthAfter.Text;
  }
}

TEST_F(FaultTest, DelayedRankWithinTheTimeoutStillGivesCorrectResults) {
  std::string Name = freshName("delay");
  local::FaultPlan F;
  F.GroupName = Name;
  F.DelayRank = 1;
  F.Delay = milliseconds(30);
  local::setFaultPlan(F);
  Expected<D::UniqueId> Id = D::groupId({Name});
  ASSERT_TRUE(bool(Id));
  std::vector<std::vector<float>> Bufs(3, std::vector<float>(300));
  std::vector<std::string> Errors(3);
  onThreads(3, [&](int R) {
    Expected<D::Communicator> C = D::join(*Id, 3, R);
    ASSERT_TRUE(bool(C));
    D::setTimeout(*C, milliseconds(5000));
    D::StreamOwner S = D::createStream("delay");
    for (unsigned I = 0; I != 300; ++I)
      Bufs[R][I] = float(R * 1000 + I);
    auto Res = D::resource(Bufs[R].data(), 1200);
    Error E = D::allReduce(*C, Res, Res, {ElemType::F32, 300}, ReduceOp::Max, S.get());
    if (!E)
      E = D::synchronize(S.get());
    Errors[R] = E ? llvm::toString(std::move(E)) : "";
  });
  for (int R = 0; R != 3; ++R) {
    EXPECT_EQ(Errors[R], "");
    for (unsigned I = 0; I != 300; ++I)
      ASSERT_EQ(Bufs[R][I], float(2000 + I));
  }
}

TEST_F(FaultTest, WrongSizeOnOneRankIsAMismatchEverywhereAndWritesNothing) {
  for (uint64_t Count : {uint64_t(4), uint64_t(100), uint64_t(100000)}) { // tiny, inline, large
    SCOPED_TRACE("count " + std::to_string(Count));
    std::string Name = freshName("wrongsize");
    local::FaultPlan F;
    F.GroupName = Name;
    F.WrongSizeRank = 1;
    F.WrongSizeAtOp = 1;
    local::setFaultPlan(F);
    Expected<D::UniqueId> Id = D::groupId({Name});
    ASSERT_TRUE(bool(Id));
    std::vector<ErrorFacts> First(3), Second(3);
    std::vector<std::vector<float>> Dst(3, std::vector<float>(Count + 1, -7.0f));
    std::vector<std::vector<float>> Src(3, std::vector<float>(Count + 1, 2.0f));
    onThreads(3, [&](int R) {
      Expected<D::Communicator> C = D::join(*Id, 3, R);
      ASSERT_TRUE(bool(C));
      D::setTimeout(*C, milliseconds(5000));
      D::StreamOwner S = D::createStream("wrongsize");
      // Buffers one element longer, so the wrong count stays in bounds.
      auto In = D::resource(Src[R].data(), (Count + 1) * 4);
      auto Out = D::resource(Dst[R].data(), (Count + 1) * 4);
      Error E = D::allReduce(*C, In, Out, {ElemType::F32, Count}, ReduceOp::Sum, S.get());
      if (!E)
        E = D::synchronize(S.get());
      First[R] = factsOf(std::move(E));
      // The group finished the refused operation together and still works.
      Error Next = D::allReduce(*C, In, Out, {ElemType::F32, Count}, ReduceOp::Sum, S.get());
      if (!Next)
        Next = D::synchronize(S.get());
      Second[R] = factsOf(std::move(Next));
    });
    for (int R = 0; R != 3; ++R) {
      SCOPED_TRACE("rank " + std::to_string(R));
      EXPECT_TRUE(First[R].Failed);
      EXPECT_EQ(First[R].Kind, ErrorKind::Mismatch) << First[R].Text;
      EXPECT_NE(First[R].Text.find("rank 1"), std::string::npos) << First[R].Text;
      EXPECT_FALSE(Second[R].Failed) << Second[R].Text;
      for (uint64_t I = 0; I != Count; ++I)
        ASSERT_EQ(Dst[R][I], 6.0f) << "element " << I;
    }
  }
}

TEST_F(FaultTest, HealthNeverBlocksWhileAPeerIsLate) {
  std::string Name = freshName("health");
  Expected<D::UniqueId> Id = D::groupId({Name});
  ASSERT_TRUE(bool(Id));
  std::atomic<bool> Rank0Waiting{false}, Release{false};
  double HealthMs = 0;
  ErrorFacts Health;
  onThreads(2, [&](int R) {
    Expected<D::Communicator> C = D::join(*Id, 2, R);
    ASSERT_TRUE(bool(C));
    D::StreamOwner S = D::createStream("health");
    std::vector<float> B(16, 1.0f);
    auto Res = D::resource(B.data(), 64);
    if (R == 1) {
      while (!Rank0Waiting)
        std::this_thread::yield();
      // Rank 0's collective is in flight and waits for us; health must not.
      auto T0 = Clock::now();
      Health = factsOf(D::health(*C));
      HealthMs = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
      Release = true;
    }
    ASSERT_FALSE(bool(D::allReduce(*C, Res, Res, {ElemType::F32, 16}, ReduceOp::Sum, S.get())));
    D::flush(S.get());
    if (R == 0) {
      Rank0Waiting = true;
      while (!Release)
        std::this_thread::yield();
    }
    EXPECT_FALSE(bool(D::synchronize(S.get())));
  });
  EXPECT_FALSE(Health.Failed) << Health.Text;
  // Rank 0's operation waits until released: any bound shows health() did
  // not wait for it; a generous one keeps a loaded machine from failing it.
  EXPECT_LT(HealthMs, 2000.0);
}

TEST_F(FaultTest, TimeoutIsConfigurablePerCommunicator) {
  // One rank never arrives: the other's operation ends after its own timeout.
  std::string Name = freshName("timeout");
  Expected<D::UniqueId> Id = D::groupId({Name});
  ASSERT_TRUE(bool(Id));
  Expected<D::Communicator> C0 = D::join(*Id, 2, 0);
  Expected<D::Communicator> C1 = D::join(*Id, 2, 1);
  ASSERT_TRUE(C0 && C1);
  D::setTimeout(*C0, milliseconds(150));
  D::StreamOwner S = D::createStream("timeout");
  std::vector<float> B(16);
  auto Res = D::resource(B.data(), 64);
  auto T0 = Clock::now();
  Error E = D::allReduce(*C0, Res, Res, {ElemType::F32, 16}, ReduceOp::Sum, S.get());
  if (!E)
    E = D::synchronize(S.get());
  double Ms = std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  ErrorFacts F = factsOf(std::move(E));
  EXPECT_EQ(F.Kind, ErrorKind::Timeout) << F.Text;
  EXPECT_EQ(F.Peer, 1);
  EXPECT_NE(F.Text.find("150 ms"), std::string::npos) << F.Text;
  EXPECT_GE(Ms, 140.0);
  // Far below the default timeout (300 s), with room for a loaded machine:
  // the property is that this communicator's own timeout applied.
  EXPECT_LT(Ms, 20000.0);
}

} // namespace
