//===- tests/runtime/GlooCommContextTest.cpp - The Gloo context under a comm ===//
//
// runtime/gloo/GlooCommContext.h, one rank per process: ctest starts 2 and
// 4 processes (file: rendezvous) through tests/launch/spawn_ranks.py (label
// gloo). What `collc bench --backend gloo` relies on: the context it gets
// is the one the replay runs that comm on (a raw gloo::allreduce on it pairs
// with the other ranks' replay of the comm: on any other context it would
// time out), and raw calls on it interleaved with replays, ranks out of
// step and no barrier between, pair correctly. Started alone, the process's
// main says why and exits 1.
//
//===----------------------------------------------------------------------===//

#include "tests/launch/LaunchedRank.h"

#include "compiler/Compile.h"
#include "runtime/gloo/GlooCommContext.h"
#include "runtime/gloo/GlooExecutor.h"
#include "runtime/gloo/GlooSmallAllReduce.h"
#include "runtime/gloo/GlooStore.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/local/LocalExecutor.h"

#include "llvm/Support/FormatVariadic.h"

#include <gloo/allreduce.h>
#include <gloo/context.h>
#include <gloo/math.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

using namespace collc;
using namespace collc::rt;
using llvm::Error;
using llvm::Expected;

namespace {

ProcessPlace Place;
RendezvousAddress Where;

/// Every test's executors join under a prefix of their own.
unsigned Runs = 0;

/// A plan of \p Text (WORLD replaced by the world) compiled with \p Pipeline.
plan::Plan compile(std::string Text, llvm::StringRef Pipeline = "verify") {
  for (size_t At; (At = Text.find("WORLD")) != std::string::npos;)
    Text.replace(At, 5, std::to_string(Place.World));
  Expected<plan::Plan> P = compileProgramText(Text, Pipeline, "comm_context.coll");
  if (!P)
    ADD_FAILURE() << llvm::toString(P.takeError());
  return P ? std::move(*P) : plan::Plan();
}

/// One f32 sum of \p Elems elements over the world: %a in, %ra out.
std::string oneSumProgram(uint64_t Elems) {
  return llvm::formatv("program @one_sum world(WORLD) {\n  group @dp = world\n"
                       "  %a = compute @a : f32[{0}]\n  %ra = all_reduce sum %a in @dp\n"
                       "  compute @use(%ra)\n}\n",
                       Elems)
      .str();
}

/// A gloo executor of \p P on this rank, every tensor it leaves unbound in
/// \p Storage, captured.
std::unique_ptr<Executor> start(const plan::Plan &P, std::vector<std::vector<char>> &Storage) {
  ExecutorOptions Opts;
  Opts.CommPrefix = llvm::formatv("comm_context.{0}", Runs++).str();
  Expected<std::unique_ptr<Executor>> X = createGlooExecutor(P, Place, Where, Opts);
  if (!X) {
    ADD_FAILURE() << llvm::toString(X.takeError());
    return nullptr;
  }
  for (const std::string &Name : (*X)->unboundTensors()) {
    for (const plan::Tensor &T : P.Tensors)
      if (T.Name == Name)
        Storage.emplace_back(T.Type.bytes(), 0);
    if (Error E = (*X)->bind(Name, Storage.back().data(), Storage.back().size()))
      ADD_FAILURE() << llvm::toString(std::move(E));
  }
  if (Error E = (*X)->capture())
    ADD_FAILURE() << llvm::toString(std::move(E));
  return std::move(*X);
}

/// Comm # of the first comm in group \p Group.
uint32_t commIn(const plan::Plan &P, llvm::StringRef Group) {
  for (uint32_t C = 0; C != P.Comms.size(); ++C)
    if (P.Comms[C].Group >= 0 && P.Groups[P.Comms[C].Group].Name == Group)
      return C;
  ADD_FAILURE() << "no comm in @" << Group.str();
  return 0;
}

std::vector<float> floats(llvm::MutableArrayRef<char> Bytes) {
  std::vector<float> V(Bytes.size() / 4);
  std::memcpy(V.data(), Bytes.data(), Bytes.size());
  return V;
}

/// gloo::allreduce as the bench calls it (ring, f32 sum, default tag).
void rawAllReduce(const std::shared_ptr<::gloo::Context> &C, std::vector<float> &In,
                  std::vector<float> &Out) {
  ::gloo::AllreduceOptions O(C);
  O.setInput(In.data(), In.size());
  O.setOutput(Out.data(), Out.size());
  O.setAlgorithm(::gloo::AllreduceOptions::Algorithm::RING);
  O.setReduceFunction(
      static_cast<void (*)(void *, const void *, const void *, size_t)>(&::gloo::sum<float>));
  ::gloo::allreduce(O);
}

/// Rank \p R's value of element \p I at round \p K: a mismatched pairing
/// of rounds or elements changes the sum (small integers: exact in f32).
float value(int64_t R, size_t I, int K) { return float((R + 1) * 100 + K * 7 + int(I % 13)); }
float sumOf(size_t I, int K) {
  float S = 0;
  for (int64_t R = 0; R != Place.World; ++R)
    S += value(R, I, K);
  return S;
}

const char *Groups = R"(program @comm_context world(WORLD) {
  group @dp = world
  group @tp = split(rank / 2, rank)
  %a = compute @a : f32[64]
  %b = compute @b : f32[64]
  %c = compute @c : f32[16]
  %ra = all_reduce sum %a in @dp
  %rb = all_reduce sum %b in @tp
  %rc = all_reduce sum %c in @dp
  compute @use(%ra, %rb, %rc)
}
)";

TEST(GlooCommContext, IsTheContextOfTheCommsGroup) {
  plan::Plan P = compile(Groups);
  std::vector<std::vector<char>> Storage;
  std::unique_ptr<Executor> X = start(P, Storage);
  ASSERT_TRUE(X);
  std::vector<std::shared_ptr<::gloo::Context>> Of;
  for (uint32_t C = 0; C != P.Comms.size(); ++C) {
    Expected<std::shared_ptr<::gloo::Context>> Ctx = rt::gloo::commContext(*X, C);
    ASSERT_TRUE(bool(Ctx)) << llvm::toString(Ctx.takeError());
    const plan::Group &G = P.Groups[P.Comms[C].Group];
    EXPECT_EQ((*Ctx)->size, int(G.membersOf(Place.Rank).size())) << "comm #" << C;
    EXPECT_EQ((*Ctx)->rank, G.LocalRank[Place.Rank]) << "comm #" << C;
    Of.push_back(*Ctx);
  }
  uint32_t A = commIn(P, "dp"), B = commIn(P, "tp");
  for (uint32_t C = 0; C != P.Comms.size(); ++C) {
    bool SameGroup = P.Comms[C].Group == P.Comms[A].Group;
    EXPECT_EQ(Of[C] == Of[A], SameGroup) << "comm #" << C << " against #" << A;
  }
  EXPECT_NE(Of[A], Of[B]);
}

// Rank 0 calls gloo::allreduce on the context of the plan's one comm while
// every other rank replays the plan: the two pair up only if the context is
// the one the replay runs the comm on (on another, both sides time out).
// The operand is large enough for the replay to take Gloo's ring too.
TEST(GlooCommContext, RawCallPairsWithThePeersReplay) {
  constexpr uint64_t Elems = rt::gloo::SmallAllReduceMaxBytes / 4 + 1000;
  plan::Plan P = compile(oneSumProgram(Elems));
  std::vector<std::vector<char>> Storage;
  std::unique_ptr<Executor> X = start(P, Storage);
  ASSERT_TRUE(X);
  ASSERT_EQ(P.Comms.size(), 1u);
  Expected<std::shared_ptr<::gloo::Context>> Ctx = rt::gloo::commContext(*X, 0);
  ASSERT_TRUE(bool(Ctx)) << llvm::toString(Ctx.takeError());
  std::vector<float> Result;
  if (Place.Rank == 0) {
    std::vector<float> In(Elems), Out(Elems);
    for (size_t I = 0; I != In.size(); ++I)
      In[I] = value(0, I, 0);
    try {
      rawAllReduce(*Ctx, In, Out);
    } catch (const std::exception &E) {
      FAIL() << "raw gloo::allreduce on the replay's context: " << E.what();
    }
    Result = Out;
  } else {
    Error E = X->replay([&](const plan::Compute &C, uint32_t) -> Error {
      if (C.Name != "a")
        return Error::success();
      Expected<llvm::MutableArrayRef<char>> A = X->tensor("a");
      if (!A)
        return A.takeError();
      for (size_t I = 0; I != A->size() / 4; ++I) {
        float V = value(Place.Rank, I, 0);
        std::memcpy(A->data() + 4 * I, &V, 4);
      }
      return Error::success();
    });
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    Expected<llvm::MutableArrayRef<char>> R = X->tensor("ra");
    ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
    Result = floats(*R);
  }
  ASSERT_EQ(Result.size(), Elems);
  for (size_t I = 0; I != Result.size(); ++I)
    ASSERT_EQ(Result[I], sumOf(I, 0)) << "element " << I;
}

// The bench's pattern: replay and raw allreduce on the same context,
// alternating (raw first, then replay first, ...), with no barrier between
// them and the ranks out of step (each sleeps on its own rounds); every
// result exact. At 8 B the replay's exchange (GlooSmallAllReduce.h) runs on
// its own slot between the ring's calls; at 3 MiB both are Gloo's ring of
// many segments on the same slot.
TEST(GlooCommContext, InterleavedWithReplaysOutOfStep) {
  for (uint64_t Elems : {2ull, 3ull << 18}) { // 8 B; 3 MiB, many ring segments
    plan::Plan P = compile(oneSumProgram(Elems), "");
    std::vector<std::vector<char>> Storage;
    std::unique_ptr<Executor> X = start(P, Storage);
    ASSERT_TRUE(X);
    ASSERT_EQ(P.Comms.size(), 1u);
    Expected<std::shared_ptr<::gloo::Context>> Ctx = rt::gloo::commContext(*X, 0);
    ASSERT_TRUE(bool(Ctx)) << llvm::toString(Ctx.takeError());
    std::vector<float> In(Elems), Out(Elems);
    int K = 0; // the round, the same on every rank
    auto Skew = [&] {
      if ((K + Place.Rank) % 3 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
    };
    auto Check = [&](const std::vector<float> &Got, const char *Side) {
      for (size_t I = 0; I != Got.size(); ++I)
        if (Got[I] != sumOf(I, K)) {
          ADD_FAILURE() << Side << " round " << K << " (" << Elems << " elements), element " << I
                        << ": " << Got[I] << " != " << sumOf(I, K);
          return false;
        }
      return true;
    };
    auto Raw = [&] {
      Skew();
      for (size_t I = 0; I != Elems; ++I)
        In[I] = value(Place.Rank, I, K);
      try {
        rawAllReduce(*Ctx, In, Out);
      } catch (const std::exception &E) {
        ADD_FAILURE() << "raw round " << K << ": " << E.what();
        return false;
      }
      bool Ok = Check(Out, "raw");
      ++K;
      return Ok;
    };
    auto Replay = [&] {
      Skew();
      Error E = X->replay([&](const plan::Compute &C, uint32_t) -> Error {
        if (C.Name != "a")
          return Error::success();
        Expected<llvm::MutableArrayRef<char>> A = X->tensor("a");
        if (!A)
          return A.takeError();
        for (size_t I = 0; I != Elems; ++I) {
          float V = value(Place.Rank, I, K);
          std::memcpy(A->data() + 4 * I, &V, 4);
        }
        return Error::success();
      });
      if (E) {
        ADD_FAILURE() << "replay round " << K << ": " << llvm::toString(std::move(E));
        return false;
      }
      Expected<llvm::MutableArrayRef<char>> R = X->tensor("ra");
      if (!R) {
        ADD_FAILURE() << llvm::toString(R.takeError());
        return false;
      }
      bool Ok = Check(floats(*R), "replay");
      ++K;
      return Ok;
    };
    for (int Pair = 0; Pair != 12; ++Pair) {
      bool RawFirst = Pair % 2 == 0;
      ASSERT_TRUE(RawFirst ? Raw() : Replay());
      ASSERT_TRUE(RawFirst ? Replay() : Raw());
    }
  }
}

TEST(GlooCommContext, RefusesWhatHasNoGlooContext) {
  plan::Plan P = compile(Groups);
  std::vector<std::vector<char>> Storage;
  std::unique_ptr<Executor> X = start(P, Storage);
  ASSERT_TRUE(X);
  Expected<std::shared_ptr<::gloo::Context>> Out = rt::gloo::commContext(*X, 3);
  ASSERT_FALSE(bool(Out));
  EXPECT_EQ(llvm::toString(Out.takeError()),
            "comm #3 is not in 0..2 of plan @comm_context");

  // A local executor (a one-rank world: its join does not wait) has none.
  Expected<plan::Plan> One = compileProgramText(R"(program @one world(1) {
  group @dp = world
  %a = compute @a : f32[4]
  %ra = all_reduce sum %a in @dp
  compute @use(%ra)
}
)");
  ASSERT_TRUE(bool(One)) << llvm::toString(One.takeError());
  Expected<std::unique_ptr<Executor>> L = createLocalExecutor(*One, 0);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  Out = rt::gloo::commContext(**L, 0);
  ASSERT_FALSE(bool(Out));
  EXPECT_EQ(llvm::toString(Out.takeError()),
            "the executor of plan @one runs on the local backend, not gloo: "
            "it has no Gloo context");
}

// A rank outside a comm's group has no context for it (4 processes and
// more: a group of ranks 0 and 1).
TEST(GlooCommContext, RefusesACommThisRankIsNotIn) {
  if (Place.World < 3)
    GTEST_SKIP() << "needs 3 processes or more for a group without this rank; ctest runs 4";
  plan::Plan P = compile(R"(program @some world(WORLD) {
  group @dp = world
  group @lead = split((rank < 2) - 1, rank)
  %a = compute @a : f32[4]
  %ra = all_reduce sum %a in @dp
  %b = compute @b : f32[4] when rank < 2
  %rb = all_reduce sum %b in @lead when rank < 2
  compute @use(%ra)
  compute @use_b(%rb) when rank < 2
}
)");
  std::vector<std::vector<char>> Storage;
  std::unique_ptr<Executor> X = start(P, Storage);
  ASSERT_TRUE(X);
  uint32_t Lead = commIn(P, "lead");
  Expected<std::shared_ptr<::gloo::Context>> Out = rt::gloo::commContext(*X, Lead);
  if (Place.Rank < 2) {
    ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
    EXPECT_EQ((*Out)->size, 2);
  } else {
    ASSERT_FALSE(bool(Out));
    EXPECT_EQ(llvm::toString(Out.takeError()),
              llvm::formatv("rank {0} takes no part in comm #{1} all_reduce "
                            "in @lead",
                            Place.Rank, Lead)
                  .str());
  }
}

} // namespace

int main(int Argc, char **Argv) {
  Expected<collc::test::LaunchedRank> Me = collc::test::launchedRank();
  if (!Me) {
    fprintf(stderr, "start under tests/launch/spawn_ranks.py: %s\n",
            llvm::toString(Me.takeError()).c_str());
    return 1;
  }
  Place = Me->Place;
  Where = Me->Where;
  ::testing::InitGoogleTest(&Argc, Argv);
  return RUN_ALL_TESTS();
}
