//===- tests/runtime/FlightRecordTest.cpp - The flight record and its dumps ===//

#include "tests/runtime/RuntimeTestUtil.h"
#include "tests/support/JsonPaths.h"

#include "compiler/Compile.h"
#include "runtime/exec/FlightRecord.h"
#include "runtime/exec/FlightRecordDump.h"
#include "runtime/exec/RecordSignal.h"
#include "runtime/local/LocalDriver.h"
#include "runtime/local/LocalExecutor.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <chrono>
#include <csignal>
#include <thread>

using namespace collc;
using namespace collc::rt;
using namespace collc::test;
using llvm::Error;
using llvm::Expected;

namespace {

const char *TwoOps = R"(program @two_ops world(2) {
  group @dp = world
  %a = compute @layer_a : f32[256]
  %b = compute @layer_b : i32[64]
  %ra = all_reduce sum %a in @dp
  %gb = all_gather %b in @dp
  compute @optimizer(%ra, %gb)
}
)";

/// Every test records rank 0 or 1 of TwoOps.
class FlightRecordTest : public ::testing::Test {
protected:
  void SetUp() override {
    Expected<plan::Plan> Compiled = compileProgramText(TwoOps, "", "rec.coll");
    ASSERT_TRUE(bool(Compiled)) << llvm::toString(Compiled.takeError());
    P = std::move(*Compiled);
  }
  plan::Plan P;
};

/// A fresh directory, removed with everything in it at the end.
struct ScratchDir {
  llvm::SmallString<128> Path;
  ScratchDir() { EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-record", Path)); }
  ~ScratchDir() { llvm::sys::fs::remove_directories(Path); }
};

/// The dump at \p Path by JSON pointer; an unreadable one fails the test
/// (and reads as empty).
JsonPaths readDump(llvm::StringRef Path) {
  Expected<JsonPaths> J = JsonPaths::read(Path);
  if (!J) {
    ADD_FAILURE() << llvm::toString(J.takeError());
    return JsonPaths();
  }
  return std::move(*J);
}

TEST_F(FlightRecordTest, KeepsTheLastEventsOfTheRingInOrder) {
  RecordOptions O;
  O.Capacity = 16;
  FlightRecorder R(P, 0, "local", O);
  R.beginReplay();
  for (uint32_t K = 0; K != 40; ++K) {
    R.issued(K, K % 2);
    R.started(K, K % 2);
    R.completed(K % 2);
  }
  FlightRecorder::Snapshot S = R.snapshot();
  EXPECT_EQ(S.Recorded, 40u);
  ASSERT_EQ(S.Events.size(), 16u);
  for (size_t I = 0; I != 16; ++I) {
    EXPECT_EQ(S.Events[I].Seq, 24 + I);
    EXPECT_EQ(S.Events[I].Step, 24 + I);
    EXPECT_EQ(S.Events[I].State, CommState::Completed);
    EXPECT_GE(S.Events[I].StartedNs, S.Events[I].IssuedNs);
    EXPECT_GE(S.Events[I].EndedNs, S.Events[I].StartedNs);
    EXPECT_GT(S.Events[I].IssuedNs, 0);
  }
}

TEST_F(FlightRecordTest, CapacityIsAPowerOfTwoWithinBounds) {
  RecordOptions O;
  O.Capacity = 100;
  EXPECT_EQ(FlightRecorder(P, 0, "local", O).options().Capacity, 128u);
  O.Capacity = 1;
  EXPECT_EQ(FlightRecorder(P, 0, "local", O).options().Capacity, 16u);
  O.Capacity = ~0u;
  EXPECT_EQ(FlightRecorder(P, 0, "local", O).options().Capacity, 1u << 20);
}

TEST_F(FlightRecordTest, AFailureKeepsItsKindAndTheWorldRankBlamed) {
  FlightRecorder R(P, 1, "local", {});
  R.beginReplay();
  R.issued(3, 0);
  R.started(3, 0);
  R.failed(0, ErrorKind::PeerLost, 0);
  FlightRecorder::Snapshot S = R.snapshot();
  ASSERT_EQ(S.Events.size(), 1u);
  EXPECT_EQ(S.Events[0].State, CommState::Failed);
  EXPECT_EQ(S.Events[0].Error, ErrorKind::PeerLost);
  EXPECT_EQ(S.Events[0].Peer, 0);
  EXPECT_EQ(S.Events[0].Replay, 1u);
  // The first failure of the rank is kept; later ones follow from it.
  R.noteFailure({ErrorKind::Timeout, 0, "first"});
  R.noteFailure({ErrorKind::Broken, -1, "second"});
  ASSERT_TRUE(R.failure());
  EXPECT_EQ(R.failure()->Message, "first");
}

TEST_F(FlightRecordTest, AStateChangeOfAnEventTheRingLeftBehindIsDropped) {
  RecordOptions O;
  O.Capacity = 16;
  FlightRecorder R(P, 0, "local", O);
  R.issued(0, 0); // comm 0's event, soon overwritten
  for (uint32_t K = 0; K != 16; ++K)
    R.issued(1 + K, 1);
  R.completed(0); // must not touch the slot comm 1 now holds
  for (const FlightRecorder::Event &E : R.snapshot().Events) {
    EXPECT_EQ(E.Comm, 1u);
    EXPECT_EQ(E.State, CommState::Issued);
  }
}

TEST_F(FlightRecordTest, OffRecordsNothing) {
  RecordOptions O;
  O.On = false;
  FlightRecorder R(P, 0, "local", O);
  R.beginReplay();
  R.issued(0, 0);
  R.completed(0);
  FlightRecorder::Snapshot S = R.snapshot();
  EXPECT_TRUE(S.Events.empty());
  EXPECT_EQ(S.Recorded, 0u);
}

// A reader sees every slot whole while the writer runs (a seqlock): each
// event's step is its sequence number, as written, never a torn mix.
TEST_F(FlightRecordTest, ASnapshotTakenWhileRecordingSeesWholeEvents) {
  RecordOptions O;
  O.Capacity = 64;
  FlightRecorder R(P, 0, "local", O);
  std::atomic<bool> Done{false};
  std::thread Writer([&] {
    for (uint32_t K = 0; K != 200000; ++K) {
      R.issued(K, K % 2);
      R.completed(K % 2);
    }
    Done = true;
  });
  size_t Snapshots = 0;
  while (!Done || Snapshots == 0) {
    FlightRecorder::Snapshot S = R.snapshot();
    for (size_t I = 0; I != S.Events.size(); ++I) {
      ASSERT_EQ(S.Events[I].Step, uint32_t(S.Events[I].Seq));
      ASSERT_EQ(S.Events[I].Comm, S.Events[I].Seq % 2);
      if (I) {
        ASSERT_GT(S.Events[I].Seq, S.Events[I - 1].Seq);
      }
    }
    ++Snapshots;
  }
  Writer.join();
  EXPECT_GT(Snapshots, 0u);
}

TEST_F(FlightRecordTest, TheCoarseClockTicksWhileUsed) {
  int64_t Before = unixNowNs();
  CoarseClockUse Use;
  int64_t First = coarseNowNs();
  EXPECT_GE(First, Before);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // It moved on (a loaded machine may wake its thread late, never never).
  int64_t Later = coarseNowNs();
  for (int I = 0; I != 200 && Later == First; ++I) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    Later = coarseNowNs();
  }
  EXPECT_GT(Later, First);
  EXPECT_LE(Later, unixNowNs());
}

TEST_F(FlightRecordTest, ABlockingCommStartsAsItIsIssued) {
  FlightRecorder R(P, 0, "local", {});
  R.beginReplay();
  R.issued(4, 1, /*Waiting=*/true);
  FlightRecorder::Snapshot S = R.snapshot();
  ASSERT_EQ(S.Events.size(), 1u);
  EXPECT_EQ(S.Events[0].State, CommState::Started);
  EXPECT_EQ(S.Events[0].StartedNs, S.Events[0].IssuedNs);
  EXPECT_EQ(S.Position, RankActivity::Wait);
  EXPECT_EQ(S.PositionStep, 4u);
  R.completed(1);
  R.atCompute(6);
  S = R.snapshot();
  EXPECT_EQ(S.Events[0].State, CommState::Completed);
  EXPECT_EQ(S.Position, RankActivity::Compute);
  EXPECT_EQ(S.PositionStep, 6u);
}

/// Runs TwoOps on two local ranks for \p Steps steps with \p Opts.
std::vector<std::string> runTwoOps(const plan::Plan &P, ExecutorOptions Opts, unsigned Steps) {
  std::vector<std::string> Errors(2);
  onThreads(2, [&](int Rank) {
    Expected<std::unique_ptr<Executor>> X = createLocalExecutor(P, Rank, Opts);
    if (!X) {
      Errors[Rank] = llvm::toString(X.takeError());
      return;
    }
    if (Error E = (*X)->bindOwnMemory()) {
      Errors[Rank] = llvm::toString(std::move(E));
    } else if (Error E = (*X)->capture()) {
      Errors[Rank] = llvm::toString(std::move(E));
    }
    for (unsigned S = 0; S != Steps && Errors[Rank].empty(); ++S)
      if (Error E = (*X)->replay([](const plan::Compute &, uint32_t) {
            return Error::success();
          }))
        Errors[Rank] = llvm::toString(std::move(E));
  });
  return Errors;
}

TEST_F(FlightRecordTest, AnExecutorDumpsItsRecordAtItsEndWhenAsked) {
  ScratchDir Dir;
  ExecutorOptions Opts;
  Opts.CommPrefix = freshName("record.exit");
  Opts.Record.Dir = std::string(Dir.Path);
  Opts.Record.DumpAtExit = true;
  std::vector<std::string> Errors = runTwoOps(P, Opts, 3);
  ASSERT_EQ(Errors, std::vector<std::string>(2));
  for (int64_t Rank : {0, 1}) {
    JsonPaths J = readDump(flightRecordPath(Dir.Path, Rank));
    EXPECT_EQ(J.str("/format"), "collc-flight-record");
    EXPECT_EQ(J.num("/version"), 1);
    EXPECT_EQ(J.num("/rank"), Rank);
    EXPECT_EQ(J.str("/reason"), "exit");
    EXPECT_EQ(J.str("/backend"), "local");
    EXPECT_EQ(J.str("/plan/digest"), P.Digest);
    EXPECT_EQ(J.num("/replays"), 3);
    EXPECT_FALSE(J.has("/error"));
    ASSERT_EQ(J.size("/events"), 6); // two comms a step, three steps
    EXPECT_EQ(J.num("/events/5/replay"), 3);
    EXPECT_EQ(J.str("/events/5/state"), "completed");
    EXPECT_EQ(J.str("/events/5/group"), "dp");
    EXPECT_EQ(J.str("/events/5/op"), "all_gather");
    EXPECT_EQ(J.str("/events/5/dtype"), "i32");
    EXPECT_EQ(J.num("/events/5/bytes"), 256);
    EXPECT_NE(J.str("/events/5/loc"), "");
    EXPECT_GE(J.num("/events/5/ended_ns"), J.num("/events/5/issued_ns"));
    EXPECT_GT(J.num("/events/5/issued_ns"), 0);
  }
}

TEST_F(FlightRecordTest, AFailedStepDumpsTheFailingRankWithItsError) {
  ScratchDir Dir;
  ExecutorOptions Opts;
  Opts.CommPrefix = freshName("record.fail");
  Opts.Timeout = std::chrono::milliseconds(5000);
  Opts.Record.Dir = std::string(Dir.Path);
  // Rank 1 dies at its 4th operation in a group: in @dp, step 2's
  // all_gather (operations count per group); rank 0 is told at once.
  local::FaultPlan F;
  F.KillRank = 1;
  F.KillAtOp = 4;
  F.KillSilently = false;
  local::setFaultPlan(F);
  std::vector<std::string> Errors = runTwoOps(P, Opts, 3);
  local::setFaultPlan(std::nullopt);
  ASSERT_FALSE(Errors[0].empty());
  JsonPaths J = readDump(flightRecordPath(Dir.Path, 0));
  EXPECT_EQ(J.str("/reason"), "failure");
  ASSERT_TRUE(J.has("/error"));
  // Lost, or broken by the loss (the group learns it while rank 0 waits).
  std::string Kind = J.str("/error/kind");
  EXPECT_TRUE(Kind == "peer_lost" || Kind == "broken") << Kind;
  EXPECT_EQ(J.num("/error/peer"), 1);
  int64_t Events = J.size("/events");
  ASSERT_GT(Events, 0);
  std::string Last = "/events/" + std::to_string(Events - 1);
  EXPECT_EQ(J.str(Last + "/state"), "failed");
  EXPECT_EQ(J.str(Last + "/error"), Kind);
  EXPECT_EQ(J.num(Last + "/blamed"), 1);
}

TEST_F(FlightRecordTest, SigUsr1DumpsEveryEnrolledRecordWithoutStoppingTheRun) {
  ScratchDir Dir;
  RecordOptions O;
  O.Dir = std::string(Dir.Path);
  FlightRecorder R(P, 0, "local", O);
  R.beginReplay();
  R.issued(2, 0);
  std::string Path = flightRecordPath(Dir.Path, 0);
  {
    RecordSignalEnrollment Enrolled(R);
    ASSERT_EQ(raise(SIGUSR1), 0);
    // The dumping thread wakes on its own; a loaded machine may take a while.
    for (int I = 0; I != 400 && !llvm::sys::fs::exists(Path); ++I)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  JsonPaths J = readDump(Path);
  EXPECT_EQ(J.str("/reason"), "signal");
  EXPECT_EQ(J.str("/position/activity"), "launch");
  // Withdrawn: a later dump of the enrolled records leaves it alone.
  ASSERT_FALSE(llvm::sys::fs::remove(Path));
  EXPECT_FALSE(dumpEnrolledRecords(DumpReason::Request));
  EXPECT_FALSE(llvm::sys::fs::exists(Path));
}

TEST_F(FlightRecordTest, ADumpIntoAPlaceThatCannotHoldItSaysWhy) {
  FlightRecorder R(P, 0, "local", {});
  ScratchDir Dir;
  llvm::SmallString<128> File(Dir.Path);
  llvm::sys::path::append(File, "a-file");
  { std::error_code EC; llvm::raw_fd_ostream(File, EC) << "x"; }
  Error E = dumpFlightRecord(R, File, DumpReason::Request);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("a-file"), std::string::npos);
}

} // namespace
