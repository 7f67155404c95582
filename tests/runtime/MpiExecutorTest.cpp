//===- tests/runtime/MpiExecutorTest.cpp - The executor and deadlines on `mpi` -===//
//
// Run by ctest under `mpirun -np 2` (one process per rank, label mpi), the
// gate's tests (MpiGateTest) under `-np 3` and the tests written for 4
// processes under `-np 4`: a
// real example plan (gpt2_ddp, compiled here for MPI_COMM_WORLD's size)
// replayed by createMpiExecutor, each process checking its own rank's
// results against runtime/verify's reference; the factory's refusals; and
// deadlines that name the rank that did not arrive. Its main holds the
// MpiSession.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/RuntimeTestUtil.h"

#include "compiler/Compile.h"
#include "ir/Parser.h"
#include "runtime/exec/ElementConversion.h"
#include "runtime/mpi/ArrivalBoard.h"
#include "runtime/mpi/EagerLimit.h"
#include "runtime/mpi/MpiDriver.h"
#include "runtime/mpi/MpiExecutor.h"
#include "runtime/mpi/MpiSession.h"
#include "runtime/mpi/MpiUserOps.h"
#include "runtime/mpi/PairAllReduce.h"
#include "runtime/mpi/PersistentAllReduce.h"
#include "runtime/verify/PlanChecker.h"
#include "runtime/verify/SyntheticData.h"

#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <mpi.h>

#include <cstring>
#include <limits>
#include <thread>

using namespace collc;
using namespace collc::rt;
using collc::test::factsOf;
using llvm::Error;
using llvm::Expected;

namespace {

int worldRank() {
  int R = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  return R;
}
int worldSize() {
  int N = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &N);
  return N;
}

/// The example compiled for this run's world.
plan::Plan compileExample(llvm::StringRef Name) {
  ParseOptions Opts;
  Opts.WorldSize = worldSize();
  std::string Path = std::string(COLLC_EXAMPLES_DIR) + "/" + Name.str() + ".coll";
  Expected<ParsedProgram> Parsed = parseProgramFile(Path, Opts);
  if (!Parsed) {
    ADD_FAILURE() << llvm::toString(Parsed.takeError());
    return {};
  }
  DiagnosticEngine Diags(Parsed->Source.get());
  Expected<plan::Plan> P = compileProgram(*Parsed->Prog, {}, Diags, llvm::nulls());
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  return std::move(*P);
}

ProcessPlace place() {
  Expected<ProcessPlace> P = placeFromLauncher();
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  return *P;
}

RendezvousAddress viaMpi() {
  RendezvousAddress A;
  A.How = RendezvousAddress::Kind::Mpi;
  return A;
}

/// A plan (compiled for MPI_COMM_WORLD) on createMpiExecutor, bound to
/// memory of its own: replays fill this rank's synthetic data in the
/// model's compute, and check() compares this rank's results with the
/// reference.
struct RankReplay {
  const plan::Plan &P;
  ProcessPlace Me = place();
  std::unique_ptr<Executor> X;
  std::vector<std::vector<char>> Storage;
  std::vector<uint8_t> Touched;
  std::vector<std::string> Names; ///< the tensors bound to memory of its own

  /// \p LeaveOneUnbound: all but the first of Names are bound.
  RankReplay(const plan::Plan &P, std::chrono::milliseconds Timeout, bool LeaveOneUnbound = false)
      : P(P) {
    EXPECT_EQ(Me.Source, "mpirun");
    ExecutorOptions Opts;
    Opts.Timeout = Timeout;
    Expected<std::unique_ptr<Executor>> Made = createMpiExecutor(P, Me, viaMpi(), Opts);
    if (!Made) {
      ADD_FAILURE() << llvm::toString(Made.takeError());
      return;
    }
    X = std::move(*Made);
    Names = X->unboundTensors();
    for (size_t I = LeaveOneUnbound ? 1 : 0; I < Names.size(); ++I)
      bindNew(Names[I]);
    // Only tensors a comm touches have memory (the rest are the model's).
    Touched.assign(P.Tensors.size(), 0);
    for (uint32_t T : X->touchedTensors())
      Touched[T] = 1;
  }

  /// Binds \p Name to new memory of its own.
  void bindNew(llvm::StringRef Name) {
    uint32_t T = 0;
    while (P.Tensors[T].Name != Name)
      ++T;
    Storage.emplace_back(P.Tensors[T].Type.bytes(), 0);
    EXPECT_FALSE(bool(X->bind(Name, Storage.back().data(), Storage.back().size())));
  }

  Error replay(int Steps) {
    for (int Step = 0; Step != Steps; ++Step)
      if (Error E = X->replay([&](const plan::Compute &C, uint32_t) -> Error {
            for (uint32_t T : C.Outputs) {
              if (!Touched[T])
                continue;
              Expected<llvm::MutableArrayRef<char>> M = X->tensor(P.Tensors[T].Name);
              if (!M)
                return M.takeError();
              fillSynthetic(P, T, Me.Rank, *M);
            }
            return Error::success();
          }))
        return E;
    return Error::success();
  }

  /// How many tensors of this rank match the reference (0 after a
  /// failure, which is reported). The others are checked in their own
  /// processes; MPI reduces in an order of its own: floats within the
  /// summation bound.
  size_t check() {
    CheckOptions Mine;
    Mine.OnlyRank = Me.Rank;
    Mine.Reductions.RankOrdered = false;
    Expected<CheckSummary> Sum = checkPlanResults(
        P,
        [&](int64_t, uint32_t T) -> llvm::ArrayRef<char> {
          Expected<llvm::MutableArrayRef<char>> M = X->tensor(P.Tensors[T].Name);
          if (!M) {
            llvm::consumeError(M.takeError());
            return {};
          }
          return *M;
        },
        Mine);
    if (!Sum) {
      ADD_FAILURE() << llvm::toString(Sum.takeError());
      return 0;
    }
    EXPECT_FALSE(bool(X->health()));
    return Sum->TensorsChecked;
  }
};

/// Captures \p P on this rank, replays it for two steps and checks this
/// rank's results; returns how many tensors it checked. \p AfterCapture,
/// if any, runs once the executor has captured the plan.
size_t replayAndCheckThisRank(const plan::Plan &P,
                              llvm::function_ref<void()> AfterCapture = nullptr) {
  RankReplay R(P, std::chrono::milliseconds(30000));
  if (!R.X)
    return 0;
  Error E = R.X->capture();
  if (!E && AfterCapture)
    AfterCapture();
  if (!E)
    E = R.replay(2);
  if (E) {
    ADD_FAILURE() << llvm::toString(std::move(E));
    return 0;
  }
  return R.check();
}

TEST(MpiExecutorTest, Gpt2DdpMatchesTheReferenceOnEveryRank) {
  plan::Plan P = compileExample("gpt2_ddp");
  ASSERT_EQ(P.World, worldSize());
  EXPECT_GT(replayAndCheckThisRank(P), 100u);
}

/// An async all_reduce progresses while the rank that issued it computes:
/// rank 0 launches it and then computes for a second before it waits; rank
/// 1 (which waits at once) must be done long before that. A stream that
/// only progressed its work when someone waited would hold rank 1 for the
/// whole second. Both of the two-member exchange's paths
/// (PairAllReduce.h): whole operands (64 KiB) and halves (1 MiB).
TEST(MpiExecutorTest, AnAsyncAllReduceProgressesWhileItsIssuerComputes) {
  if (worldSize() != 2)
    GTEST_SKIP() << "written for 2 processes (mpi-executor-np2)";
  constexpr auto Compute = std::chrono::milliseconds(1000);
  for (uint64_t Elems : {uint64_t(16384), uint64_t(262144)}) {
    // The schedule puts @other between the launch and the wait.
    std::string Text = llvm::formatv("program @overlap world(2) {\n  group @dp = world\n"
                                     "  %g = compute @grad : f32[{0}]\n"
                                     "  %r = all_reduce sum %g in @dp\n"
                                     "  %x = compute @other : f32[4]\n"
                                     "  compute @use(%r, %x)\n}\n",
                                     Elems)
                           .str();
    Expected<plan::Plan> P = compileProgramText(Text);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    ExecutorOptions Opts;
    Opts.Timeout = std::chrono::milliseconds(30000);
    Opts.CommPrefix = llvm::formatv("overlap.{0}", Elems).str();
    Expected<std::unique_ptr<Executor>> X = createMpiExecutor(*P, place(), viaMpi(), Opts);
    ASSERT_TRUE(bool(X)) << llvm::toString(X.takeError());
    std::vector<float> G(Elems, 1.0f), R(Elems, 0.0f), Other(4);
    ASSERT_FALSE(bool((*X)->bind("g", G.data(), G.size() * 4)));
    ASSERT_FALSE(bool((*X)->bind("r", R.data(), R.size() * 4)));
    for (const std::string &Name : (*X)->unboundTensors())
      ASSERT_FALSE(bool((*X)->bind(Name, Other.data(), Other.size() * 4)));
    ASSERT_FALSE(bool((*X)->capture()));
    MPI_Barrier(MPI_COMM_WORLD);
    auto Start = std::chrono::steady_clock::now();
    Error E = (*X)->replay([&](const plan::Compute &C, uint32_t) -> Error {
      if (worldRank() == 0 && C.Name == "other")
        std::this_thread::sleep_for(Compute);
      return Error::success();
    });
    double TookMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start).count();
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_EQ(R.front(), 2.0f);
    EXPECT_EQ(R.back(), 2.0f);
    // Rank 1's time, judged on every rank (rank 0 prints the failure).
    MPI_Bcast(&TookMs, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    EXPECT_LT(TookMs, double(Compute.count()) / 2)
        << Elems * 4 << " bytes: rank 1 waited for rank 0's compute";
  }
}

TEST(MpiExecutorTest, RefusesAPlaceOrRendezvousThatDoesNotFit) {
  plan::Plan P = compileExample("gpt2_ddp");
  ProcessPlace Wrong = place();
  Wrong.World = P.World + 1;
  test::ErrorFacts F = factsOf(createMpiExecutor(P, Wrong, viaMpi()).takeError());
  EXPECT_EQ(F.Kind, ErrorKind::InvalidArgument);
  EXPECT_NE(F.Text.find(llvm::formatv("world of {0}", P.World).str()), std::string::npos) << F.Text;
  EXPECT_NE(F.Text.find(llvm::formatv("has {0} processes", P.World + 1).str()), std::string::npos)
      << F.Text;
  Expected<RendezvousAddress> File = parseRendezvous("file:/tmp/x", "COLLC_RENDEZVOUS");
  ASSERT_TRUE(bool(File));
  F = factsOf(createMpiExecutor(P, place(), *File).takeError());
  EXPECT_NE(F.Text.find("not rendezvous 'file:/tmp/x' (from COLLC_RENDEZVOUS; use 'mpi')"),
            std::string::npos)
      << F.Text;
}

TEST(MpiExecutorTest, JoinRefusesAWorldThatIsNotMpiCommWorld) {
  test::ErrorFacts F = factsOf(
      mpi::MpiDriver::join("w", size_t(worldSize() + 1), size_t(worldRank())).takeError());
  EXPECT_NE(F.Text.find(llvm::formatv("of MPI_COMM_WORLD's {0}", worldSize()).str()),
            std::string::npos)
      << F.Text;
}

using D = mpi::MpiDriver;

/// How one all_reduce ended on this rank, and how long it took.
struct Ended {
  test::ErrorFacts F;
  std::chrono::steady_clock::duration Took;
};

/// An f32 sum of \p Elems elements from \p Src into \p Dst over \p C,
/// waited for.
Ended sumAndWait(const D::Communicator &C, D::CommStream S, const D::Resource &Src,
                 uint64_t Elems, const D::Resource &Dst) {
  auto Start = std::chrono::steady_clock::now();
  Ended R;
  if (Error E = D::allReduce(C, Src, Dst, {ElemType::F32, Elems}, ReduceOp::Sum, S)) {
    ADD_FAILURE() << "refused at issue: " << llvm::toString(std::move(E));
    return R;
  }
  R.F = factsOf(D::synchronize(S));
  R.Took = std::chrono::steady_clock::now() - Start;
  return R;
}

/// The same, in place on \p Res.
Ended sumAndWait(const D::Communicator &C, D::CommStream S, const D::Resource &Res,
                 uint64_t Elems) {
  return sumAndWait(C, S, Res, Elems, Res);
}

/// Rank 0's all_reduce #2, which rank 1 never joined (the board shows it
/// at #1), timed out naming rank 1 well within the bound.
void expectTimedOutNamingRankOne(const Ended &R) {
  EXPECT_EQ(R.F.Kind, ErrorKind::Timeout);
  EXPECT_EQ(R.F.Peer, 1);
  EXPECT_NE(R.F.Text.find("all_reduce #2"), std::string::npos) << R.F.Text;
  EXPECT_NE(R.F.Text.find("rank 1 (at #1)"), std::string::npos) << R.F.Text;
  EXPECT_LT(R.Took, std::chrono::milliseconds(6000));
}

/// Rank 1 arrives 300 ms late at a sum over \p C of \p Data (rank + 1 on
/// each rank, in place): it is waited for and every rank gets the sum.
/// Then rank 0 sums again with a 1500 ms timeout and rank 1 stays away:
/// rank 0's error names it.
void expectALateRankWaitedForThenAMissingOneNamed(const D::Communicator &C, D::CommStream S,
                                                 std::vector<float> &Data) {
  // Generous while the ranks should meet (a loaded host), short once one
  // stays away.
  D::setTimeout(C, std::chrono::milliseconds(30000));
  auto Res = D::resource(Data.data(), Data.size() * 4);
  if (worldRank() == 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Ended First = sumAndWait(C, S, Res, Data.size());
  ASSERT_FALSE(First.F.Failed) << First.F.Text;
  float Sum = float(worldSize() * (worldSize() + 1) / 2);
  EXPECT_EQ(Data.front(), Sum);
  EXPECT_EQ(Data[Data.size() / 2], Sum);
  EXPECT_EQ(Data.back(), Sum);
  D::setTimeout(C, std::chrono::milliseconds(1500));
  if (worldRank() == 0)
    expectTimedOutNamingRankOne(sumAndWait(C, S, Res, Data.size()));
}

/// Rank 1 never arrives at a collective (or a send) that rank 0 waits
/// for: rank 0's error names rank 1, within the timeout.
TEST(MpiExecutorTest, ATimeoutNamesTheRankThatDidNotArrive) {
  Expected<D::Communicator> C = D::join("deadline", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::setTimeout(*C, std::chrono::milliseconds(1500));
  D::StreamOwner S = D::createStream("test");
  std::vector<float> Data(16, 1.0f);
  auto Res = D::resource(Data.data(), Data.size() * 4);
  // One collective together first: the board shows #1 on both.
  ASSERT_FALSE(bool(D::allReduce(*C, Res, Res, {ElemType::F32, 16}, ReduceOp::Sum, D::streamOf(S))));
  ASSERT_FALSE(bool(D::synchronize(D::streamOf(S))));
  if (worldRank() == 0) {
    expectTimedOutNamingRankOne(sumAndWait(*C, D::streamOf(S), Res, 16));
    // Broken from then on: refused at once, with the first failure.
    test::ErrorFacts H = factsOf(D::health(*C));
    EXPECT_EQ(H.Peer, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Two members exchange a 1 MiB all_reduce in halves (PairAllReduce.h),
/// with the collective's deadline: a late rank is waited for and both get
/// the sum; a rank that stays away is named within the timeout.
TEST(MpiExecutorTest, TwoMembersExchangeALargeAllReduceAndNameWhoIsMissing) {
  if (worldSize() != 2)
    GTEST_SKIP() << "written for 2 processes (mpi-executor-np2)";
  Expected<D::Communicator> C = D::join("pair", 2, size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::StreamOwner S = D::createStream("test");
  // 1 MiB of f32 and one, halved unevenly.
  std::vector<float> Data((256 << 10) + 1, float(worldRank() + 1));
  expectALateRankWaitedForThenAMissingOneNamed(*C, D::streamOf(S), Data);
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Element \p I of rank \p R's operand in the pieces test: small integers,
/// so every type sums them exactly.
template <typename V> V pieceOperand(int R, uint64_t I) { return V(I % 7 + uint64_t(R) + 1); }

/// Sums (in place) and maxima (out of place) of \p Count elements of type
/// \p V (\p T) between the two ranks of \p C; every element checked.
template <typename V>
void expectExactPairReductions(const D::Communicator &C, D::CommStream S, ElemType T,
                               uint64_t Count) {
  std::vector<V> Data(Count), Out(Count);
  for (uint64_t I = 0; I != Count; ++I)
    Data[I] = pieceOperand<V>(worldRank(), I);
  auto In = D::resource(Data.data(), Count * sizeof(V));
  auto Max = D::resource(Out.data(), Count * sizeof(V));
  ASSERT_FALSE(bool(D::allReduce(C, In, Max, {T, Count}, ReduceOp::Max, S)));
  ASSERT_FALSE(bool(D::allReduce(C, In, In, {T, Count}, ReduceOp::Sum, S)));
  Error E = D::synchronize(S);
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  uint64_t Wrong = 0;
  for (uint64_t I = 0; I != Count; ++I)
    Wrong += Data[I] != V(pieceOperand<V>(0, I) + pieceOperand<V>(1, I)) ||
             Out[I] != pieceOperand<V>(1, I);
  EXPECT_EQ(Wrong, 0u) << elemTypeName(T).str() << " x " << Count;
}

/// Just over the eager limit two members send the whole operand in pieces
/// that each fit it (PairAllReduce.h): 2 and 3 pieces of uneven sizes, and
/// past 3 one message again, for types of 1, 4 and 8 bytes; every element
/// exact, in place and out of place.
TEST(MpiExecutorTest, TwoMembersSendAnOperandJustOverTheEagerLimitInPieces) {
  if (worldSize() != 2)
    GTEST_SKIP() << "written for 2 processes (mpi-executor-np2)";
  Expected<D::Communicator> C = D::join("pieces", 2, size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::setTimeout(*C, std::chrono::milliseconds(60000));
  D::StreamOwner S = D::createStream("test");
  uint64_t Payload = (*C)->eagerPayload();
  // Both processes are on this host, under Open MPI.
  ASSERT_GT(Payload, 0u) << "no shared-memory eager limit between two processes of one host";
  // main told rank 1 a larger limit: the group took the smaller one.
  uint64_t Mine = mpi::sharedMemoryEagerPayload(), Least = 0, Most = 0;
  MPI_Allreduce(&Mine, &Least, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&Mine, &Most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(Most, 16384u - 64);
  EXPECT_LT(Least, Most);
  ASSERT_EQ(Payload, Least);
  auto Counts = [&](unsigned E) {
    return std::vector<uint64_t>{Payload / E + 1, 2 * Payload / E + 3, 3 * Payload / E,
                                 3 * Payload / E + 1};
  };
  // The counts are what they claim to be: 2, 3, 3, then 1 piece.
  std::vector<unsigned> Pieces;
  for (uint64_t N : Counts(4))
    Pieces.push_back(mpi::PairAllReduce::pieces(N * 4, Payload));
  EXPECT_EQ(Pieces, (std::vector<unsigned>{2, 3, 3, 1}));
  for (uint64_t N : Counts(1))
    expectExactPairReductions<int8_t>(*C, D::streamOf(S), ElemType::I8, N);
  for (uint64_t N : Counts(4)) {
    expectExactPairReductions<int32_t>(*C, D::streamOf(S), ElemType::I32, N);
    expectExactPairReductions<float>(*C, D::streamOf(S), ElemType::F32, N);
  }
  for (uint64_t N : Counts(8))
    expectExactPairReductions<double>(*C, D::streamOf(S), ElemType::F64, N);
  MPI_Barrier(MPI_COMM_WORLD);
}

/// The group's scratch is kept between operations (SpareScratch.h), with
/// whatever the last one left in it: halves of an odd count and a staged
/// bf16 sum, run again with other operands, in place and out of place,
/// read none of it. Every element checked, every round.
TEST(MpiExecutorTest, TwoMembersReuseTheirScratchWithoutReadingWhatItHeld) {
  if (worldSize() != 2)
    GTEST_SKIP() << "written for 2 processes (mpi-executor-np2)";
  Expected<D::Communicator> C = D::join("reuse", 2, size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::setTimeout(*C, std::chrono::milliseconds(60000));
  D::StreamOwner S = D::createStream("test");
  // Halves, one element more on rank 1's side; the scratch is the peer's
  // half (Count / 2 + 1 elements), on huge pages.
  constexpr uint64_t Count = (512 << 10) + 1;
  ASSERT_TRUE(mpi::PairAllReduce::halves(Count, 4));
  auto Operand = [](int Round, int Rank, uint64_t I) {
    return float(I % 13 + uint64_t(Round) * 20 + uint64_t(Rank) * 5);
  };
  for (int Round = 0; Round != 3; ++Round) {
    std::vector<float> Data(Count), Out(Count, -1.0f);
    for (uint64_t I = 0; I != Count; ++I)
      Data[I] = Operand(Round, worldRank(), I);
    auto In = D::resource(Data.data(), Count * 4);
    auto Sum = D::resource(Out.data(), Count * 4);
    ASSERT_FALSE(
        bool(D::allReduce(*C, In, Sum, {ElemType::F32, Count}, ReduceOp::Sum, D::streamOf(S))));
    ASSERT_FALSE(
        bool(D::allReduce(*C, In, In, {ElemType::F32, Count}, ReduceOp::Max, D::streamOf(S))));
    // bf16, widened into the scratch before the exchange (2 * 4 bytes an
    // element there): small integers, exact in bf16.
    std::vector<uint16_t> Narrow(Count);
    for (uint64_t I = 0; I != Count; ++I)
      Narrow[I] = floatToBf16(Operand(Round, worldRank(), I));
    auto NarrowRes = D::resource(Narrow.data(), Count * 2);
    ASSERT_FALSE(bool(D::allReduce(*C, NarrowRes, NarrowRes, {ElemType::BF16, Count}, ReduceOp::Sum,
                                   D::streamOf(S))));
    Error E = D::synchronize(D::streamOf(S));
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    uint64_t Wrong = 0;
    for (uint64_t I = 0; I != Count; ++I) {
      float Want = Operand(Round, 0, I) + Operand(Round, 1, I);
      Wrong += Out[I] != Want || Data[I] != Operand(Round, 1, I) || bf16ToFloat(Narrow[I]) != Want;
    }
    EXPECT_EQ(Wrong, 0u) << "round " << Round;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Float maxima and minima pick by a comparison that depends on the
/// operand order (+0 against -0, NaN): in place, as halves, two members
/// keep rank 0's operand first, as MPI_Reduce_local with rank 0's as `in`
/// gives, bit for bit on both ranks (PairAllReduce.h). Reducing into rank
/// 0's own memory with the peer's as `in` fails it.
TEST(MpiExecutorTest, TwoMembersInPlaceKeepRankZerosOperandFirstWhereItMatters) {
  if (worldSize() != 2)
    GTEST_SKIP() << "written for 2 processes (mpi-executor-np2)";
  Expected<D::Communicator> C = D::join("order", 2, size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::setTimeout(*C, std::chrono::milliseconds(60000));
  D::StreamOwner S = D::createStream("test");
  constexpr uint64_t Count = 256 << 10; // halves
  float NaN = std::numeric_limits<float>::quiet_NaN();
  auto Operand = [&](int Rank, uint64_t I) {
    switch (I % 4) {
    case 0:
      return Rank == 0 ? 0.0f : -0.0f;
    case 1:
      return Rank == 0 ? -0.0f : 0.0f;
    case 2:
      return Rank == 0 ? NaN : 1.0f;
    default:
      return Rank == 0 ? 2.0f : NaN;
    }
  };
  for (ReduceOp Op : {ReduceOp::Max, ReduceOp::Min, ReduceOp::Sum}) {
    std::vector<float> Data(Count), Want(Count), First(Count);
    for (uint64_t I = 0; I != Count; ++I) {
      Data[I] = Operand(worldRank(), I);
      First[I] = Operand(0, I);
      Want[I] = Operand(1, I);
    }
    mpi::MpiReduction M = mpi::mpiReduction(ElemType::F32, Op);
    ASSERT_EQ(MPI_Reduce_local(First.data(), Want.data(), int(Count), M.Type, M.Op), MPI_SUCCESS);
    auto Res = D::resource(Data.data(), Count * 4);
    ASSERT_FALSE(bool(D::allReduce(*C, Res, Res, {ElemType::F32, Count}, Op, D::streamOf(S))));
    Error E = D::synchronize(D::streamOf(S));
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_EQ(std::memcmp(Data.data(), Want.data(), Count * 4), 0)
        << "op " << int(Op) << " on rank " << worldRank();
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// An exchange that has started runs to its end when its group breaks
/// meanwhile (here by a recv that times out on another stream): rank 1 is
/// in the same all_reduce, and the exchange's scratch is in use. Rank 0's
/// 1 MiB sum starts, its recv from rank 1 times out, then rank 1 joins the
/// sum: both get it (refusing it half way would leave MPI writing freed
/// scratch, and rank 1 waiting for a half that never comes).
TEST(MpiExecutorTest, AStartedExchangeRunsToItsEndWhenItsGroupBreaks) {
  if (worldSize() != 2)
    GTEST_SKIP() << "written for 2 processes (mpi-executor-np2)";
  Expected<D::Communicator> C = D::join("break-mid", 2, size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::setTimeout(*C, std::chrono::milliseconds(30000));
  D::StreamOwner Sum = D::createStream("sum"), Recv = D::createStream("recv");
  constexpr uint64_t Elems = 256 << 10; // 1 MiB of f32: the halves
  std::vector<float> Data(Elems, float(worldRank() + 1)), Got(4);
  auto Res = D::resource(Data.data(), Data.size() * 4);
  if (worldRank() == 0) {
    ASSERT_FALSE(bool(D::allReduce(*C, Res, Res, {ElemType::F32, Elems}, ReduceOp::Sum,
                                   D::streamOf(Sum))));
    D::flush(D::streamOf(Sum)); // the worker starts it
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    D::setTimeout(*C, std::chrono::milliseconds(500));
    ASSERT_FALSE(bool(D::recv(*C, D::resource(Got.data(), 16), {ElemType::F32, 4}, 1,
                              D::streamOf(Recv))));
    test::ErrorFacts F = factsOf(D::synchronize(D::streamOf(Recv)));
    ASSERT_EQ(F.Kind, ErrorKind::Timeout) << F.Text;
    ASSERT_TRUE(factsOf(D::health(*C)).Failed) << "the group is broken";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (worldRank() == 1) {
    ASSERT_FALSE(bool(D::allReduce(*C, Res, Res, {ElemType::F32, Elems}, ReduceOp::Sum,
                                   D::streamOf(Sum))));
  }
  Error E = D::synchronize(D::streamOf(Sum));
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  EXPECT_EQ(Data.front(), 3.0f);
  EXPECT_EQ(Data.back(), 3.0f);
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Whether a 256 KiB f32 sum in place over the world is gated: the gate's
/// tests need it (mpi-executor-np3 runs them; two members exchange).
bool worldGatesALargeSum() {
  return D::gatesAllReduce(size_t(worldSize()), 256 << 10, /*InPlace=*/true, ElemType::F32,
                           ReduceOp::Sum);
}
#define SKIP_UNLESS_GATED()                                                                        \
  if (worldSize() != 3)                                                                            \
    GTEST_SKIP() << "written for 3 processes (mpi-executor-np3), where the gate applies";           \
  ASSERT_TRUE(worldGatesALargeSum())

/// An all_reduce of 256 KiB or more in a group of 3 is gated before MPI's
/// blocking call (ArrivalGate.h). Rank 1 arrives late: the gate waits for it and every
/// rank gets the sum; then rank 1 does not arrive in time: rank 0's gate
/// times out naming it, instead of hanging in MPI_Allreduce. On the board
/// (\p OnBoard: one host, entries for every member), rank 1 arriving after
/// that is refused at once, naming rank 0, rather than entering the call
/// alone; behind a barrier it would (ArrivalGate.h), so it stays away.
void expectTheGateWaitsAndNamesWhoIsMissing(const D::Communicator &C, bool OnBoard) {
  EXPECT_EQ(C->gatesOnBoard(), OnBoard);
  D::StreamOwner S = D::createStream("test");
  constexpr uint64_t Elems = 64 << 10; // 256 KiB of f32
  std::vector<float> Data(Elems, float(worldRank() + 1));
  auto Res = D::resource(Data.data(), Data.size() * 4);
  expectALateRankWaitedForThenAMissingOneNamed(C, D::streamOf(S), Data);
  MPI_Barrier(MPI_COMM_WORLD);
  if (OnBoard && worldRank() == 1) {
    Ended R = sumAndWait(C, D::streamOf(S), Res, Elems);
    EXPECT_EQ(R.F.Kind, ErrorKind::Timeout);
    EXPECT_NE(R.F.Text.find("all_reduce #2 in group '" + C->name() + "' was given up by rank 0"),
              std::string::npos)
        << R.F.Text;
    EXPECT_LT(R.Took, std::chrono::milliseconds(1000)) << "refused at once, not at its own deadline";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(MpiGateTest, ALargeAllReduceWaitsOnTheBoardAndNamesWhoIsMissing) {
  SKIP_UNLESS_GATED();
  Expected<D::Communicator> C = D::join("gate", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  expectTheGateWaitsAndNamesWhoIsMissing(*C, /*OnBoard=*/true);
}

/// With every board entry of the process taken, a group is gated by a
/// barrier instead, which waits and names alike.
TEST(MpiGateTest, WithoutABoardEntryTheGateIsABarrier) {
  SKIP_UNLESS_GATED();
  std::vector<D::Communicator> Held;
  for (unsigned I = 0; I != mpi::ArrivalBoard::GroupEntries; ++I) {
    Expected<D::Communicator> C =
        D::join("held" + std::to_string(I), size_t(worldSize()), size_t(worldRank()));
    ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
    Held.push_back(std::move(*C));
  }
  Expected<D::Communicator> C = D::join("gate-barrier", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  expectTheGateWaitsAndNamesWhoIsMissing(*C, /*OnBoard=*/false);
}

/// A 256 KiB f32 sum (gated: ArrivalGate.h) of rank + 1 over the ranks of
/// \p C, the world's.
void expectAGatedAllReduceSums(const D::Communicator &C) {
  D::StreamOwner S = D::createStream("test");
  std::vector<float> Data(64 << 10, float(worldRank() + 1));
  auto Res = D::resource(Data.data(), Data.size() * 4);
  Ended R = sumAndWait(C, D::streamOf(S), Res, Data.size());
  ASSERT_FALSE(R.F.Failed) << R.F.Text;
  float Sum = float(worldSize() * (worldSize() + 1) / 2);
  EXPECT_EQ(Data.front(), Sum);
  EXPECT_EQ(Data.back(), Sum);
}

/// Only rank 0's entries run out: the members agree that none gates on the
/// board (a rank on the board and one behind a barrier would each wait for
/// the other), and the gated all_reduce still sums.
TEST(MpiGateTest, MembersAgreeWhetherTheyGateOnTheBoard) {
  SKIP_UNLESS_GATED();
  Expected<D::Communicator> World = D::join("asym", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(World)) << llvm::toString(World.takeError());
  std::vector<D::Communicator> RankZeroOnly;
  for (unsigned I = 0; I != mpi::ArrivalBoard::GroupEntries; ++I) {
    Expected<D::Communicator> C = D::split(*World, worldRank() == 0 ? 0 : -1, 0);
    ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
    RankZeroOnly.push_back(std::move(*C));
  }
  Expected<D::Communicator> C = D::join("asym-gate", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  EXPECT_FALSE((*C)->gatesOnBoard());
  expectAGatedAllReduceSums(*C);
}

/// Two parents of one name, split alike: rank 0 made a group of the
/// child's name before (alone), rank 1 did not. The members still agree on
/// the child's key, so the board gate finds every member.
TEST(MpiGateTest, MembersAgreeOnTheBoardKeyOfAGroupNamedLikeAnEarlierOne) {
  SKIP_UNLESS_GATED();
  Expected<D::Communicator> A = D::join("twin", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  Expected<D::Communicator> B = D::join("twin", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  Expected<D::Communicator> Alone = D::split(*A, worldRank() == 0 ? 0 : -1, 0);
  ASSERT_TRUE(bool(Alone)) << llvm::toString(Alone.takeError());
  Expected<D::Communicator> Both = D::split(*B, 0, 0);
  ASSERT_TRUE(bool(Both)) << llvm::toString(Both.takeError());
  if (worldRank() == 0) {
    ASSERT_EQ((*Alone)->name(), (*Both)->name());
  }
  EXPECT_TRUE((*Both)->gatesOnBoard());
  D::setTimeout(*Both, std::chrono::milliseconds(20000));
  expectAGatedAllReduceSums(*Both);
}

/// Rank 0 gives up on all_gather_words and drops the group; rank 1 joins
/// the gather afterwards, and rank 0's MPI completes the abandoned request
/// while it waits in a barrier: its buffers must still be there (kept for
/// the process, AbandonedMemory.h; under ASan a freed buffer would show).
TEST(MpiExecutorTest, AGivenUpGatherMayStillCompleteAfterItsGroupIsGone) {
  if (worldSize() != 2)
    GTEST_SKIP() << "written for 2 processes (mpi-executor-np2)";
  Expected<D::Communicator> C = D::join("late-gather", 2, size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  if (worldRank() == 0) {
    D::setTimeout(*C, std::chrono::milliseconds(500));
    test::ErrorFacts F = factsOf(D::allGatherWords(*C, {7u, 8u}).takeError());
    EXPECT_EQ(F.Kind, ErrorKind::Timeout);
    EXPECT_EQ(F.Peer, 1);
    *C = D::Communicator(); // the group is gone; its gather is not
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (worldRank() == 1) {
    Expected<std::vector<uint32_t>> All = D::allGatherWords(*C, {5u, 6u});
    ASSERT_TRUE(bool(All)) << llvm::toString(All.takeError());
    EXPECT_EQ(*All, (std::vector<uint32_t>{7u, 8u, 5u, 6u}));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// The blocking call behind a gate is kept from 256 KiB on the wire where
/// libnbc would reduce along a binomial tree: in groups of 3, in place, or
/// by an operation that does not commute (bf16 min is one, to keep the
/// lower rank's value on ties). Two members exchange (PairAllReduce.h),
/// one waits for nobody; every other all_reduce is MPI_Iallreduce.
TEST(MpiExecutorTest, ALargeAllReduceIsGatedWhereLibnbcWouldUseItsBinomialTree) {
  constexpr uint64_t Large = 256 << 10;
  auto F32 = ElemType::F32;
  auto Sum = ReduceOp::Sum;
  EXPECT_TRUE(D::gatesAllReduce(3, Large, /*InPlace=*/false, F32, Sum));
  EXPECT_TRUE(D::gatesAllReduce(3, 64 << 20, false, F32, Sum));
  EXPECT_FALSE(D::gatesAllReduce(2, 64 << 20, /*InPlace=*/true, ElemType::BF16, ReduceOp::Min));
  EXPECT_FALSE(D::gatesAllReduce(1, 64 << 20, true, F32, Sum));
  EXPECT_TRUE(D::gatesAllReduce(4, Large, /*InPlace=*/true, F32, Sum));
  EXPECT_TRUE(D::gatesAllReduce(8, Large, false, ElemType::BF16, ReduceOp::Min));
  EXPECT_FALSE(D::gatesAllReduce(3, Large - 1, false, F32, Sum));
  EXPECT_FALSE(D::gatesAllReduce(4, Large - 1, true, ElemType::BF16, ReduceOp::Min));
  EXPECT_FALSE(D::gatesAllReduce(4, Large, false, F32, Sum));
  EXPECT_FALSE(D::gatesAllReduce(8, 64 << 20, false, ElemType::F64, ReduceOp::Max));
}

/// From 4 members a 1 MiB all_reduce out of place is MPI_Iallreduce,
/// polled against the deadline like a small one: a late rank is waited for
/// and every rank gets the sum; a rank that stays away is named by each of
/// the others within the timeout (no gate, so no verdict: none is in a
/// blocking call).
TEST(MpiExecutorTest, FromFourRanksALargeAllReduceIsNonblockingAndNamesWhoIsMissing) {
  if (worldSize() < 4)
    GTEST_SKIP() << "needs 4 processes (mpi-executor-np4)";
  int Last = worldSize() - 1;
  Expected<D::Communicator> C = D::join("large4", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  // Generous while the ranks should meet (a loaded host), short once one
  // stays away.
  D::setTimeout(*C, std::chrono::milliseconds(30000));
  D::StreamOwner S = D::createStream("test");
  constexpr uint64_t Elems = 256 << 10; // 1 MiB of f32
  ASSERT_FALSE(
      D::gatesAllReduce(size_t(worldSize()), Elems * 4, /*InPlace=*/false, ElemType::F32,
                        ReduceOp::Sum));
  std::vector<float> In(Elems, float(worldRank() + 1)), Out(Elems, 0.0f);
  auto Src = D::resource(In.data(), In.size() * 4), Dst = D::resource(Out.data(), Out.size() * 4);
  auto SumAndWait = [&] { return sumAndWait(*C, D::streamOf(S), Src, Elems, Dst); };
  if (worldRank() == Last)
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Ended First = SumAndWait();
  ASSERT_FALSE(First.F.Failed) << First.F.Text;
  float Sum = float(worldSize() * (worldSize() + 1) / 2);
  EXPECT_EQ(Out.front(), Sum);
  EXPECT_EQ(Out.back(), Sum);
  D::setTimeout(*C, std::chrono::milliseconds(1500));
  if (worldRank() != Last) {
    Ended R = SumAndWait();
    EXPECT_EQ(R.F.Kind, ErrorKind::Timeout);
    EXPECT_EQ(R.F.Peer, Last);
    EXPECT_NE(R.F.Text.find("all_reduce #2"), std::string::npos) << R.F.Text;
    EXPECT_NE(R.F.Text.find("not arrived: rank " + std::to_string(Last) + " (at #1)"),
              std::string::npos)
        << R.F.Text;
    EXPECT_EQ(R.F.Text.find("given up"), std::string::npos) << R.F.Text;
    EXPECT_LT(R.Took, std::chrono::milliseconds(6000));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// At 4 members a 1 MiB all_reduce is gated in place and not out of place,
/// and MPI asks in place of every member or none. Rank 0 passes it and the
/// others do not: rank 0's gate sees them announce the all_reduce without
/// a gate and refuses at once, naming one (entering MPI's blocking call, it
/// would wait forever for calls that cannot match); the others time out.
TEST(MpiExecutorTest, FromFourRanksAMemberAloneInPlaceIsRefusedInsteadOfHanging) {
  if (worldSize() < 4)
    GTEST_SKIP() << "needs 4 processes (mpi-executor-np4)";
  Expected<D::Communicator> C = D::join("mixed4", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  ASSERT_TRUE((*C)->gatesOnBoard());
  constexpr auto Limit = std::chrono::milliseconds(4000);
  D::setTimeout(*C, Limit);
  D::StreamOwner S = D::createStream("test");
  constexpr uint64_t Elems = 256 << 10; // 1 MiB of f32
  std::vector<float> In(Elems, 1.0f), Out(Elems, 0.0f);
  auto Src = D::resource(In.data(), In.size() * 4), Dst = D::resource(Out.data(), Out.size() * 4);
  // Rank 0 in place, the others not.
  Ended R = sumAndWait(*C, D::streamOf(S), Src, Elems, worldRank() == 0 ? Src : Dst);
  const test::ErrorFacts &F = R.F;
  auto Took = R.Took;
  if (worldRank() == 0) {
    EXPECT_EQ(F.Kind, ErrorKind::InvalidArgument) << F.Text;
    EXPECT_GE(F.Peer, 1);
    EXPECT_NE(F.Text.find("called it without the gate before MPI's blocking call"),
              std::string::npos)
        << F.Text;
    EXPECT_LT(Took, Limit) << "refused when it saw the others, not at its deadline";
  } else {
    EXPECT_EQ(F.Kind, ErrorKind::Timeout) << F.Text;
    EXPECT_LT(Took, 2 * Limit);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// What the mpi driver relies on (docs/runtime.md): unlike libnbc's
/// all_reduce, its all_gather and all_to_all make the same messages
/// whether a member passes MPI_IN_PLACE or not, so rank 0 alone in place
/// (its input inside its output) gets the same results as the others, at a
/// block of 4 B, 4 KiB and 256 KiB. Run at 2 and 4 processes.
TEST(MpiExecutorTest, AllGatherAndAllToAllTakeAMemberAloneInPlace) {
  Expected<D::Communicator> C = D::join("alone-in-place", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::setTimeout(*C, std::chrono::milliseconds(30000));
  D::StreamOwner S = D::createStream("test");
  size_t N = size_t(worldSize()), Me = size_t(worldRank());
  bool Alone = Me == 0;
  // Element I of the block that rank From sends rank To.
  auto Value = [](size_t From, size_t To, uint64_t I) {
    return float(From * 1000003 + To * 7919 + I % 4093);
  };
  for (uint64_t Block : {uint64_t(1), uint64_t(1) << 10, uint64_t(64) << 10}) {
    auto F32 = ElemType::F32;
    std::vector<float> In(Block * N), Out(Block * N, -1.0f);
    // all_gather: this rank's block, at its place in Out when in place.
    float *Gathered = Alone ? Out.data() + Me * Block : In.data();
    for (uint64_t I = 0; I != Block; ++I)
      Gathered[I] = Value(Me, 0, I);
    Error E = D::allGather(*C, D::resource(Gathered, Block * 4),
                           D::resource(Out.data(), Out.size() * 4), {F32, Block}, D::streamOf(S));
    if (!E)
      E = D::synchronize(D::streamOf(S));
    ASSERT_FALSE(bool(E)) << "all_gather of " << Block << ": " << llvm::toString(std::move(E));
    for (size_t From = 0; From != N; ++From)
      for (uint64_t I : {uint64_t(0), Block / 2, Block - 1})
        ASSERT_EQ(Out[From * Block + I], Value(From, 0, I))
            << "all_gather of " << Block << " from rank " << From << ", element " << I;
    // all_to_all: block To goes to rank To; in place, from Out itself.
    float *Sent = Alone ? Out.data() : In.data();
    for (size_t To = 0; To != N; ++To)
      for (uint64_t I = 0; I != Block; ++I)
        Sent[To * Block + I] = Value(Me, To, I);
    E = D::allToAll(*C, D::resource(Sent, Block * N * 4), D::resource(Out.data(), Out.size() * 4),
                    {F32, Block}, N, D::streamOf(S));
    if (!E)
      E = D::synchronize(D::streamOf(S));
    ASSERT_FALSE(bool(E)) << "all_to_all of " << Block << ": " << llvm::toString(std::move(E));
    for (size_t From = 0; From != N; ++From)
      for (uint64_t I : {uint64_t(0), Block / 2, Block - 1})
        ASSERT_EQ(Out[From * Block + I], Value(From, Me, I))
            << "all_to_all of " << Block << " from rank " << From << ", element " << I;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// \p Text compiled (an empty plan, reported, where it does not compile).
plan::Plan compileOrFail(const std::string &Text) {
  Expected<plan::Plan> P = compileProgramText(Text, "", "test.coll");
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  return std::move(*P);
}

/// Four all_reduces on the world: an f32 sum and avg that the mpi backend
/// sets up once from three members, a bf16 sum (staged) and a 256 KiB max
/// (the gate's size) that it does not.
plan::Plan compileSmallSteps() {
  std::string Text = "program @small_steps world(" + std::to_string(worldSize()) + R"() {
  group @dp = world
  %a = compute @layer_a : f32[1000]
  %b = compute @layer_b(%a) : f32[77]
  %c = compute @layer_c(%b) : bf16[300]
  %d = compute @layer_d(%c) : f32[65536]
  %ra = all_reduce sum %a in @dp
  %rb = all_reduce avg %b in @dp
  %rc = all_reduce sum %c in @dp
  %rd = all_reduce max %d in @dp
  compute @optimizer(%ra, %rb, %rc, %rd)
}
)";
  return compileOrFail(Text);
}

/// Open MPI's persistent all_reduces (PersistentAllReduce.h), from 4
/// members: run under mpirun -np 4 where this MPI has them.
class MpiPersistentTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (worldSize() < 4)
      GTEST_SKIP() << "needs 4 processes (mpi-executor-np4)";
    if (!mpi::PersistentAllReduce::available())
      GTEST_SKIP() << "this MPI has no persistent collectives";
  }
};

/// From 4 members an all_reduce below the gate's size is set up once
/// (Open MPI's persistent collective, PersistentAllReduce.h) and started at
/// each launch: each start reads the buffers as they are then, avg
/// divides, in place works. Two members, a staged input (bf16 sums widen
/// on the host) and the gate's size are not set up. A rank that stays away
/// is named within the timeout, and the broken group refuses the next
/// launch with its first failure.
TEST_F(MpiPersistentTest, APreparedAllReduceIsPersistentAndNamesWhoIsMissing) {
  int Last = worldSize() - 1;
  Expected<D::Communicator> C = D::join("persist4", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::setTimeout(*C, std::chrono::milliseconds(30000));
  D::StreamOwner S = D::createStream("test");
  constexpr uint64_t Elems = 16 << 10; // 64 KiB of f32
  std::vector<float> In(Elems), Out(Elems, 0.0f), Mean(Elems), Gated(64 << 10);
  auto Src = D::resource(In.data(), In.size() * 4), Dst = D::resource(Out.data(), Out.size() * 4);
  auto InPlace = D::resource(Mean.data(), Mean.size() * 4);
  auto F32 = ElemType::F32;
  auto ExpectNotSetUp = [](Expected<D::PreparedAllReduce> P) {
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    EXPECT_FALSE(*P);
  };
  ExpectNotSetUp(D::prepareAllReduce(*C, Src, Dst, {ElemType::BF16, 2 * Elems}, ReduceOp::Sum,
                                     ElemType::BF16, 1.0));
  auto Large = D::resource(Gated.data(), Gated.size() * 4);
  ExpectNotSetUp(
      D::prepareAllReduce(*C, Large, Large, {F32, Gated.size()}, ReduceOp::Sum, F32, 1.0));
  Expected<D::Communicator> Pair = D::split(*C, worldRank() / 2, worldRank());
  ASSERT_TRUE(bool(Pair)) << llvm::toString(Pair.takeError());
  ExpectNotSetUp(D::prepareAllReduce(*Pair, Src, Dst, {F32, Elems}, ReduceOp::Sum, F32, 1.0));
  uint64_t Before = mpi::PersistentAllReduce::live();
  Expected<D::PreparedAllReduce> Sum =
      D::prepareAllReduce(*C, Src, Dst, {F32, Elems}, ReduceOp::Sum, F32, 1.0);
  ASSERT_TRUE(Sum && *Sum) << (Sum ? "not set up" : llvm::toString(Sum.takeError()));
  Expected<D::PreparedAllReduce> Avg =
      D::prepareAllReduce(*C, InPlace, InPlace, {F32, Elems}, ReduceOp::Avg, F32, 1.0);
  ASSERT_TRUE(Avg && *Avg) << (Avg ? "not set up" : llvm::toString(Avg.takeError()));
  EXPECT_EQ(mpi::PersistentAllReduce::live(), Before + 2);
  float N = float(worldSize()), RankSum = N * (N + 1) / 2;
  for (int Step = 1; Step <= 3; ++Step) {
    std::fill(In.begin(), In.end(), float(Step * (worldRank() + 1)));
    std::fill(Mean.begin(), Mean.end(), float(Step * (worldRank() + 1)));
    ASSERT_FALSE(bool(D::allReduce(*Sum, D::streamOf(S))));
    ASSERT_FALSE(bool(D::allReduce(*Avg, D::streamOf(S))));
    Error E = D::synchronize(D::streamOf(S));
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    for (uint64_t I : {uint64_t(0), Elems / 2, Elems - 1}) {
      EXPECT_EQ(Out[I], float(Step) * RankSum) << "step " << Step << ", element " << I;
      EXPECT_EQ(Mean[I], float(Step) * RankSum / N) << "step " << Step << ", element " << I;
    }
  }
  D::setTimeout(*C, std::chrono::milliseconds(1500));
  if (worldRank() != Last) {
    Ended R;
    auto Start = std::chrono::steady_clock::now();
    ASSERT_FALSE(bool(D::allReduce(*Sum, D::streamOf(S))));
    R.F = factsOf(D::synchronize(D::streamOf(S)));
    R.Took = std::chrono::steady_clock::now() - Start;
    EXPECT_EQ(R.F.Kind, ErrorKind::Timeout) << R.F.Text;
    EXPECT_EQ(R.F.Peer, Last);
    // The split was the group's #1 and #2 (its exchange, MPI_Comm_split);
    // six launches followed.
    EXPECT_NE(R.F.Text.find("all_reduce #9"), std::string::npos) << R.F.Text;
    EXPECT_NE(R.F.Text.find("not arrived: rank " + std::to_string(Last) + " (at #8)"),
              std::string::npos)
        << R.F.Text;
    EXPECT_LT(R.Took, std::chrono::milliseconds(6000));
    test::ErrorFacts Again = factsOf(D::allReduce(*Avg, D::streamOf(S)));
    EXPECT_EQ(Again.Kind, ErrorKind::Broken) << Again.Text;
    EXPECT_EQ(Again.Peer, Last) << Again.Text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// The executor sets a captured plan's small all_reduces up at capture, on
/// every rank in plan order, beside the calls it does not set up on the
/// same group (a staged bf16 sum, one of the gate's size), and every
/// result matches the reference.
TEST_F(MpiPersistentTest, ACapturedPlanSetsUpItsSmallAllReducesOnce) {
  plan::Plan P = compileSmallSteps();
  ASSERT_FALSE(P.Comms.empty());
  uint64_t Before = mpi::PersistentAllReduce::live();
  // Set up: the f32 sum and avg; not: the bf16 sum, the 256 KiB max.
  size_t Checked =
      replayAndCheckThisRank(P, [&] { EXPECT_EQ(mpi::PersistentAllReduce::live(), Before + 2); });
  EXPECT_EQ(Checked, 4u);
  EXPECT_EQ(mpi::PersistentAllReduce::live(), Before) << "freed with the executor";
}

/// Setting calls up is collective, so on mpi every capture is: after every
/// rank binds a tensor anew and captures again, the first capture's calls
/// are freed, the new ones read the new memory, and every result matches
/// the reference. A rank that captures again alone waits for the others and
/// times out naming one, instead of taking libnbc tags they never take.
TEST_F(MpiPersistentTest, CapturingAgainIsCollective) {
  plan::Plan P = compileSmallSteps();
  ASSERT_FALSE(P.Comms.empty());
  uint64_t Before = mpi::PersistentAllReduce::live();
  {
    RankReplay R(P, std::chrono::milliseconds(30000));
    ASSERT_TRUE(R.X);
    Error E = R.X->capture();
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_EQ(mpi::PersistentAllReduce::live(), Before + 2);
    E = R.replay(1);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    for (const std::string &Name : std::vector<std::string>(R.Names))
      R.bindNew(Name);
    E = R.X->capture();
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_EQ(mpi::PersistentAllReduce::live(), Before + 2) << "the first capture's calls freed";
    E = R.replay(2);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    EXPECT_EQ(R.check(), 4u);
  }
  EXPECT_EQ(mpi::PersistentAllReduce::live(), Before);
  MPI_Barrier(MPI_COMM_WORLD);
  constexpr auto Limit = std::chrono::milliseconds(3000);
  RankReplay R(P, Limit);
  ASSERT_TRUE(R.X);
  Error E = R.X->capture();
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  if (worldRank() == 0) {
    R.bindNew(R.Names.front());
    auto Start = std::chrono::steady_clock::now();
    test::ErrorFacts F = factsOf(R.X->capture());
    auto Took = std::chrono::steady_clock::now() - Start;
    EXPECT_EQ(F.Kind, ErrorKind::Timeout) << F.Text;
    EXPECT_GE(F.Peer, 1) << F.Text;
    EXPECT_NE(F.Text.find("not arrived: rank"), std::string::npos) << F.Text;
    EXPECT_LT(Took, 3 * Limit);
    EXPECT_EQ(mpi::PersistentAllReduce::live(), Before) << "nothing set up alone";
    test::ErrorFacts Replayed = factsOf(R.replay(1));
    EXPECT_EQ(Replayed.Kind, ErrorKind::InvalidArgument) << "not captured: " << Replayed.Text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// MPI asks in place of every member of an all_reduce or of none, and from
/// 64 KiB at 4 members libnbc's schedule depends on it: rank 0 binds the
/// output of a 64 KiB all_reduce to its input's memory, the others do not,
/// and every rank's capture refuses, naming rank 0 and another (no rank
/// sets anything up, none replays), instead of every member waiting for
/// calls that cannot match.
TEST_F(MpiPersistentTest, AMemberAloneInPlaceIsRefusedAtCapture) {
  plan::Plan P = compileOrFail("program @alone world(" + std::to_string(worldSize()) + R"() {
  group @dp = world
  %a = compute @layer_a : f32[16384]
  %ra = all_reduce sum %a in @dp
  compute @optimizer(%ra)
}
)");
  ASSERT_EQ(P.Comms.size(), 1u);
  uint64_t Before = mpi::PersistentAllReduce::live();
  RankReplay R(P, std::chrono::milliseconds(30000));
  ASSERT_TRUE(R.X);
  if (worldRank() == 0) {
    Expected<llvm::MutableArrayRef<char>> In = R.X->tensor("a");
    ASSERT_TRUE(bool(In)) << llvm::toString(In.takeError());
    ASSERT_FALSE(bool(R.X->bind("ra", In->data(), In->size())));
  }
  test::ErrorFacts F = factsOf(R.X->capture());
  EXPECT_EQ(F.Kind, ErrorKind::InvalidArgument) << F.Text;
  EXPECT_NE(F.Text.find("all_reduce comm #0 of @alone: rank 0 passes it in place"),
            std::string::npos)
      << F.Text;
  EXPECT_NE(F.Text.find("and rank 1 does not"), std::string::npos) << F.Text;
  EXPECT_EQ(F.Peer, worldRank() == 0 ? 1 : 0);
  EXPECT_EQ(mpi::PersistentAllReduce::live(), Before) << "nothing set up";
  EXPECT_EQ(factsOf(R.replay(1)).Kind, ErrorKind::InvalidArgument) << "not captured";
  MPI_Barrier(MPI_COMM_WORLD);
}

/// A rank that cannot capture (a tensor left unbound) says why, and every
/// other rank is told at once that it failed, naming it, rather than
/// waiting out its timeout at the capture's collective steps (the digests,
/// the set-ups' agreement). Once it binds the tensor, every rank captures
/// again and every result matches the reference.
TEST(MpiExecutorTest, ARankThatCannotCaptureIsNamedByTheOthersAtOnce) {
  plan::Plan P = compileSmallSteps();
  ASSERT_FALSE(P.Comms.empty());
  int Last = worldSize() - 1;
  constexpr auto Limit = std::chrono::milliseconds(20000);
  RankReplay R(P, Limit, /*LeaveOneUnbound=*/worldRank() == Last);
  ASSERT_TRUE(R.X);
  auto Start = std::chrono::steady_clock::now();
  test::ErrorFacts F = factsOf(R.X->capture());
  auto Took = std::chrono::steady_clock::now() - Start;
  EXPECT_EQ(F.Kind, ErrorKind::InvalidArgument) << F.Text;
  if (worldRank() == Last)
    EXPECT_NE(F.Text.find("1 tensor is not bound: %" + R.Names.front()), std::string::npos)
        << F.Text;
  else {
    EXPECT_NE(F.Text.find("failed on rank " + std::to_string(Last)), std::string::npos) << F.Text;
    EXPECT_EQ(F.Peer, Last);
  }
  EXPECT_LT(Took, Limit);
  if (worldRank() == Last)
    R.bindNew(R.Names.front());
  Error E = R.X->capture();
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  E = R.replay(2);
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  EXPECT_EQ(R.check(), 4u);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(MpiExecutorTest, ARecvTimeoutNamesThePeer) {
  Expected<D::Communicator> C = D::join("p2p", size_t(worldSize()), size_t(worldRank()));
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  D::setTimeout(*C, std::chrono::milliseconds(1000));
  D::StreamOwner S = D::createStream("test");
  std::vector<float> Data(4);
  if (worldRank() == 0) {
    ASSERT_FALSE(bool(D::recv(*C, D::resource(Data.data(), 16), {ElemType::F32, 4}, 1,
                              D::streamOf(S))));
    test::ErrorFacts F = factsOf(D::synchronize(D::streamOf(S)));
    EXPECT_EQ(F.Kind, ErrorKind::Timeout);
    EXPECT_EQ(F.Peer, 1);
    EXPECT_NE(F.Text.find("rank 1 did not arrive at recv"), std::string::npos) << F.Text;
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

} // namespace

/// ir/ElemTypes.def and ir/ReduceOps.def as MPI reads them: every type is
/// reduced as its row's datatype and every op by its row's MPI_Op, but for
/// collc's own ops (MpiUserOps.h): the narrow floats' min and max, and the
/// wrapping sums of 8-bit integers.
TEST(MpiReductionTest, EveryTypeAndOpReducesAsTheTablesSay) {
  struct TypeRow {
    ElemType T;
    MPI_Datatype Mpi;
    bool Narrow, Byte;
  };
  const TypeRow Types[] = {
#define COLLC_INT_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                         \
  {ElemType::Enum, Mpi, false, sizeof(Storage) == 1},
#define COLLC_NATIVE_FLOAT(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite)    \
  {ElemType::Enum, Mpi, false, false},
#define COLLC_NARROW_FLOAT(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite,    \
                           Decode, Encode)                                                         \
  {ElemType::Enum, Mpi, true, false},
#include "ir/ElemTypes.def"
  };
  const std::pair<ReduceOp, MPI_Op> Ops[] = {
#define COLLC_REDUCE_OP(Enum, Spelling, Combine, Mpi) {ReduceOp::Enum, Mpi},
#include "ir/ReduceOps.def"
  };
  for (const TypeRow &R : Types) {
    for (auto [Op, MpiOp] : Ops) {
      SCOPED_TRACE(elemTypeName(R.T).str() + " " + reduceOpName(Op).str());
      mpi::MpiReduction M = mpi::mpiReduction(R.T, Op);
      bool MinMax = Op == ReduceOp::Min || Op == ReduceOp::Max;
      if ((R.Narrow && MinMax) || (R.Byte && MpiOp == MPI_SUM)) {
        EXPECT_NE(M.Op, MpiOp) << "collc's own op, not MPI's";
        EXPECT_EQ(M.Type, R.Byte ? MPI_UINT8_T : R.Mpi);
        continue;
      }
      EXPECT_EQ(M.Type, R.Mpi);
      EXPECT_EQ(M.Op, MpiOp);
    }
  }
}

int main(int Argc, char **Argv) {
  Expected<std::unique_ptr<mpi::MpiSession>> Session = mpi::MpiSession::start();
  if (!Session) {
    fprintf(stderr, "%s\n", llvm::toString(Session.takeError()).c_str());
    return 1;
  }
  // Rank 1 is told a larger shared-memory eager limit than the others, in
  // the variable collc reads (MPI_Init has read its own already): the
  // members of a group must agree on the smallest, or a pair's pieces
  // would not match (TwoMembersSendAnOperandJustOverTheEagerLimitInPieces).
  if (worldRank() == 1)
    setenv("OMPI_MCA_btl_vader_eager_limit", "16k", 1);
  ::testing::InitGoogleTest(&Argc, Argv);
  if (worldRank() != 0) {
    auto &Listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete Listeners.Release(Listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
