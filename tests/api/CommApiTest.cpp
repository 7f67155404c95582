//===- tests/api/CommApiTest.cpp - collc.h's eager communicators and store -===//
//
// Two ranks of the local backend (threads) run every eager operation and
// check the results against values computed here; the refusals name the
// argument; a wait bounded by a timeout returns collcTimeout and the
// operation goes on. collcStoreRegister's store carries a gloo join (one
// process, world 1: the keys it sets and the claims it adds are checked),
// and collcLauncherPlace reads the launcher's variables.
//
//===----------------------------------------------------------------------===//

#include "ApiTestUtil.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <numeric>
#include <vector>

using namespace collc::apitest;

namespace {

collcCommOptions_t localComm(const char *Rendezvous, const char *Group = nullptr) {
  collcCommOptions_t O;
  collcCommOptionsInit(&O);
  O.rendezvous = Rendezvous;
  O.group = Group;
  O.timeoutMs = 20000;
  return O;
}

/// Waits for *\p T on \p C, up to the communicator's timeout, when the
/// call that issued it succeeded (*\p T is read after that call: a
/// pointer, as arguments are evaluated in no set order).
collcResult_t waitFor(collcComm_t C, collcResult_t Issued, const collcTicket_t *T) {
  return Issued == collcSuccess ? collcCommWait(C, *T, -1) : Issued;
}

TEST(CApiComm, TwoRanksRunEveryOperation) {
  struct Seen {
    std::vector<float> Sum, Gathered, Scattered, Exchanged;
    std::vector<int64_t> Max, Broadcast;
    std::vector<int32_t> Received;
  };
  std::array<Seen, 2> S;
  auto R = onTwoRanks([&](int64_t Rank) -> collcResult_t {
    collcCommOptions_t O = localComm("api-comm-ops");
    collcComm_t C = nullptr;
    if (collcResult_t E = collcCommCreate(Rank, 2, &O, &C))
      return E;
    Seen &M = S[size_t(Rank)];
    collcTicket_t T = 0;
    M.Sum = {1.f + Rank, 2.f, 3.f * (Rank + 1)};
    collcResult_t E = waitFor(C, collcCommAllReduce(C, M.Sum.data(), 3, "f32", "sum", &T), &T);
    M.Max = {Rank * 7, 5 - Rank};
    if (!E)
      E = waitFor(C, collcCommAllReduce(C, M.Max.data(), 2, "i64", "max", &T), &T);
    M.Broadcast = {Rank + 40, Rank + 50};
    if (!E)
      E = waitFor(C, collcCommBroadcast(C, M.Broadcast.data(), 16, 1, &T), &T);
    float Mine[2] = {float(Rank), float(Rank) + 0.5f};
    M.Gathered.assign(4, -1.f);
    if (!E)
      E = waitFor(C, collcCommAllGather(C, Mine, M.Gathered.data(), 8, &T), &T);
    float Chunks[4] = {1.f, 2.f, 3.f + Rank, 4.f + Rank};
    M.Scattered.assign(2, -1.f);
    if (!E)
      E = waitFor(C, collcCommReduceScatter(C, Chunks, M.Scattered.data(), 2, "f32", "avg", &T),
                  &T);
    // Rank 0 sends 1 element to itself and 2 to rank 1; rank 1 sends 2 to
    // rank 0 and 1 to itself.
    float Out[3] = {10.f * Rank, 10.f * Rank + 1, 10.f * Rank + 2};
    uint64_t Send[2] = {Rank ? 2u : 1u, Rank ? 1u : 2u};
    uint64_t Recv[2] = {Rank ? 2u : 1u, Rank ? 1u : 2u};
    M.Exchanged.assign(3, -1.f);
    if (!E)
      E = waitFor(C, collcCommAllToAll(C, Out, M.Exchanged.data(), "f32", Send, Recv, &T), &T);
    // Both ranks send first, then receive: the two progress together.
    int32_t Sent[2] = {int32_t(Rank) + 1, int32_t(Rank) + 2};
    M.Received.assign(2, 0);
    collcTicket_t TS = 0, TR = 0;
    if (!E)
      E = collcCommSend(C, Sent, 8, 1 - Rank, &TS);
    if (!E)
      E = collcCommRecv(C, M.Received.data(), 8, 1 - Rank, &TR);
    if (!E)
      E = collcCommWait(C, TR, -1);
    if (!E)
      E = collcCommWait(C, TS, -1);
    if (!E)
      E = waitFor(C, collcCommBarrier(C, &T), &T);
    int Done = 0;
    if (!E)
      E = collcCommTest(C, T, &Done);
    EXPECT_EQ(Done, 1);
    EXPECT_EQ(E, collcSuccess) << "rank " << Rank << ": " << collcGetLastError();
    collcCommDestroy(C);
    return E;
  });
  ASSERT_EQ(R[0], collcSuccess) << collcGetErrorString(R[0]);
  ASSERT_EQ(R[1], collcSuccess) << collcGetErrorString(R[1]);
  for (int Rank = 0; Rank != 2; ++Rank) {
    const Seen &M = S[size_t(Rank)];
    EXPECT_EQ(M.Sum, (std::vector<float>{3.f, 4.f, 9.f})) << Rank;
    EXPECT_EQ(M.Max, (std::vector<int64_t>{7, 5})) << Rank;
    EXPECT_EQ(M.Broadcast, (std::vector<int64_t>{41, 51})) << Rank;
    EXPECT_EQ(M.Gathered, (std::vector<float>{0.f, 0.5f, 1.f, 1.5f})) << Rank;
    EXPECT_EQ(M.Received, (std::vector<int32_t>{2 - Rank, 3 - Rank})) << Rank;
  }
  // The average of the ranks' chunks: rank 0 gets (1+1)/2, (2+2)/2; rank 1
  // (3+4)/2, (4+5)/2.
  EXPECT_EQ(S[0].Scattered, (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(S[1].Scattered, (std::vector<float>{3.5f, 4.5f}));
  EXPECT_EQ(S[0].Exchanged, (std::vector<float>{0.f, 10.f, 11.f}));
  EXPECT_EQ(S[1].Exchanged, (std::vector<float>{1.f, 2.f, 12.f}));
}

TEST(CApiComm, ABoundedWaitTimesOutAndTheOperationGoesOn) {
  auto R = onTwoRanks([&](int64_t Rank) -> collcResult_t {
    collcCommOptions_t O = localComm("api-comm-wait");
    collcComm_t C = nullptr;
    if (collcResult_t E = collcCommCreate(Rank, 2, &O, &C))
      return E;
    int32_t V = int32_t(Rank) + 7;
    collcTicket_t T = 0, B = 0;
    collcResult_t E = collcSuccess;
    if (Rank == 1) {
      // Nothing was sent yet: a wait of 50 ms ends, naming the pending
      // operation, and the recv stays posted.
      E = collcCommRecv(C, &V, 4, 0, &T);
      if (!E) {
        collcResult_t W = collcCommWait(C, T, 50);
        EXPECT_TRUE(refused(W, collcTimeout, {"still running after 50 ms"}));
        int Done = 1;
        EXPECT_OK(collcCommTest(C, T, &Done));
        EXPECT_EQ(Done, 0);
      }
      if (!E)
        E = waitFor(C, collcCommBarrier(C, &B), &B);
      if (!E)
        E = collcCommWait(C, T, -1);
      EXPECT_EQ(V, 7);
    } else {
      E = waitFor(C, collcCommBarrier(C, &B), &B);
      if (!E)
        E = waitFor(C, collcCommSend(C, &V, 4, 1, &T), &T);
    }
    EXPECT_EQ(E, collcSuccess) << "rank " << Rank << ": " << collcGetLastError();
    collcCommDestroy(C);
    return E;
  });
  EXPECT_EQ(R[0], collcSuccess) << collcGetErrorString(R[0]);
  EXPECT_EQ(R[1], collcSuccess) << collcGetErrorString(R[1]);
}

TEST(CApiComm, RefusalsNameTheArgument) {
  collcComm_t C = nullptr;
  collcCommOptions_t O = localComm("api-comm-refusals");
  ASSERT_OK(collcCommCreate(0, 1, &O, &C));
  float X[2] = {1.f, 2.f};
  collcTicket_t T = 0;
  EXPECT_TRUE(refused(collcCommAllReduce(C, X, 2, "f31", "sum", &T), collcInvalidArgument,
                      {"elemType is \"f31\"", "f32"}));
  EXPECT_TRUE(refused(collcCommAllReduce(C, X, 2, "f32", "premul_sum", &T), collcInvalidArgument,
                      {"op is \"premul_sum\": expected sum, prod, min, max or avg"}));
  EXPECT_TRUE(refused(collcCommAllReduce(C, nullptr, 2, "f32", "sum", &T), collcInvalidArgument,
                      {"data is NULL"}));
  EXPECT_TRUE(refused(collcCommAllReduce(C, X, 2, "f32", "sum", nullptr), collcInvalidArgument,
                      {"ticket is NULL"}));
  EXPECT_TRUE(refused(collcCommBroadcast(C, X, 8, 1, &T), collcInvalidArgument,
                      {"root is 1: expected 0..0"}));
  EXPECT_TRUE(
      refused(collcCommSend(C, X, 8, -1, &T), collcInvalidArgument, {"peer is -1: expected 0..0"}));
  EXPECT_TRUE(refused(collcCommWait(C, 0, -1), collcInvalidArgument, {"ticket is 0"}));
  EXPECT_TRUE(refused(collcCommWait(C, collcTicket_t(9) << 40 | 1, -1), collcInvalidArgument,
                      {"was not issued by this communicator"}));
  EXPECT_TRUE(refused(collcCommWait(C, 1, -2), collcInvalidArgument,
                      {"timeoutMs is -2: expected -1..86400000"}));
  // Counts that overflow are refused before anything moves.
  EXPECT_TRUE(refused(collcCommAllReduce(C, X, uint64_t(1) << 62, "f32", "sum", &T),
                      collcInvalidArgument, {"overflow 64 bits"}));
  EXPECT_OK(collcCommDestroy(C));
  EXPECT_TRUE(refused(collcCommBarrier(C, &T), collcInvalidArgument,
                      {"comm (", "is not a live communicator"}));
  EXPECT_TRUE(refused(collcCommDestroy(C), collcInvalidArgument, {"not a live communicator"}));

  EXPECT_TRUE(
      refused(collcCommCreate(2, 2, &O, &C), collcInvalidArgument, {"rank is 2: expected 0..1"}));
  O.group = "";
  EXPECT_TRUE(
      refused(collcCommCreate(0, 1, &O, &C), collcInvalidArgument, {"options->group is \"\""}));
  O = localComm(nullptr);
  O.backend = "carrier-pigeon";
  EXPECT_TRUE(refused(collcCommCreate(0, 1, &O, &C), collcInvalidArgument,
                      {"options->backend is \"carrier-pigeon\": expected local, mpi, gloo, nccl"}));
  O.backend = "nccl";
  collcResult_t Nccl = collcCommCreate(0, 1, &O, &C);
  EXPECT_EQ(Nccl, collcUnsupported) << collcGetLastError();
  O.backend = "gloo";
  O.rendezvous = "store:nobody-registered-this";
  collcResult_t Gloo = collcCommCreate(0, 1, &O, &C);
  // Without the gloo backend in this build, that is said first.
  if (Gloo != collcUnsupported) {
    EXPECT_TRUE(refused(Gloo, collcInvalidArgument,
                        {"no store is registered as 'nobody-registered-this'"}));
  }
}

/// A store of the test's own: a map under a lock, with counts of what
/// collc asked of it.
struct MapStore {
  std::mutex M;
  std::map<std::string, std::vector<char>> Values;
  std::map<std::string, int64_t> Counters;
  int Adds = 0;

  static int set(void *U, const char *K, const void *V, size_t N) {
    auto *S = static_cast<MapStore *>(U);
    std::lock_guard<std::mutex> L(S->M);
    const char *B = static_cast<const char *>(V);
    S->Values[K] = std::vector<char>(B, B + N);
    return 0;
  }
  static int get(void *U, const char *K, void (*Deliver)(void *, const void *, size_t), void *Ctx) {
    auto *S = static_cast<MapStore *>(U);
    std::lock_guard<std::mutex> L(S->M);
    auto It = S->Values.find(K);
    if (It == S->Values.end())
      return 1; // a world of one never waits for a peer's key
    Deliver(Ctx, It->second.data(), It->second.size());
    return 0;
  }
  static int check(void *U, const char *const *Keys, size_t Count, int *All) {
    auto *S = static_cast<MapStore *>(U);
    std::lock_guard<std::mutex> L(S->M);
    *All = 1;
    for (size_t I = 0; I != Count; ++I)
      if (!S->Values.count(Keys[I]))
        *All = 0;
    return 0;
  }
  static int add(void *U, const char *K, int64_t D, int64_t *Sum) {
    auto *S = static_cast<MapStore *>(U);
    std::lock_guard<std::mutex> L(S->M);
    ++S->Adds;
    *Sum = S->Counters[K] += D;
    return 0;
  }
  collcStore_t lent() {
    return collcStore_t{sizeof(collcStore_t), this, &set, &get, &check, &add, 1};
  }
};

TEST(CApiStore, AGlooGroupMeetsInTheProgramsStore) {
  static MapStore S; // registered for the process's life
  collcStore_t Lent = S.lent();
  ASSERT_OK(collcStoreRegister("api-test", &Lent));
  collcCommOptions_t O = localComm("store:api-test", "in-the-store");
  O.backend = "gloo";
  collcComm_t C = nullptr;
  collcResult_t R = collcCommCreate(0, 1, &O, &C);
  if (R == collcUnsupported)
    GTEST_SKIP() << "this build has no gloo backend: " << collcGetLastError();
  ASSERT_OK(R);
  float X[3] = {1.f, 2.f, 3.f};
  collcTicket_t T = 0;
  EXPECT_OK(collcCommAllReduce(C, X, 3, "f32", "sum", &T));
  EXPECT_OK(collcCommWait(C, T, -1));
  EXPECT_EQ(X[2], 3.f);
  EXPECT_OK(collcCommDestroy(C));
  // The rank was claimed through the store's add, and its claim set.
  std::lock_guard<std::mutex> L(S.M);
  EXPECT_GT(S.Adds, 0);
  bool Claimed = false;
  for (const auto &[K, V] : S.Values)
    Claimed |= K.find("in-the-store") != std::string::npos && K.find("claim") != std::string::npos;
  EXPECT_TRUE(Claimed);
}

TEST(CApiStore, RegisterRefusals) {
  MapStore S;
  collcStore_t Lent = S.lent();
  EXPECT_TRUE(refused(collcStoreRegister(nullptr, &Lent), collcInvalidArgument, {"name is NULL"}));
  EXPECT_TRUE(refused(collcStoreRegister("a/b", &Lent), collcInvalidArgument,
                      {"name is \"a/b\"", "holds '/'"}));
  EXPECT_TRUE(refused(collcStoreRegister("x", nullptr), collcInvalidArgument, {"store is NULL"}));
  collcStore_t NoAdd = Lent;
  NoAdd.add = nullptr;
  EXPECT_TRUE(
      refused(collcStoreRegister("x", &NoAdd), collcInvalidArgument, {"store->add is NULL"}));
  collcStore_t Small = Lent;
  Small.size = 8;
  EXPECT_TRUE(refused(collcStoreRegister("x", &Small), collcInvalidArgument, {"store->size is 8"}));
}

TEST(CApiLauncher, ThePlaceComesFromTheLaunchersVariables) {
  // torchrun's variables; the test's own environment has no launcher's.
  setenv("RANK", "3", 1);
  setenv("WORLD_SIZE", "4", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("LOCAL_WORLD_SIZE", "2", 1);
  setenv("GROUP_RANK", "1", 1);
  int64_t Rank = -1, World = -1, LocalRank = -1, LocalWorld = -1;
  const char *Launcher = nullptr;
  EXPECT_OK(collcLauncherPlace(&Rank, &World, &LocalRank, &LocalWorld, &Launcher));
  EXPECT_EQ(Rank, 3);
  EXPECT_EQ(World, 4);
  EXPECT_EQ(LocalRank, 1);
  EXPECT_EQ(LocalWorld, 2);
  EXPECT_STREQ(Launcher, "torchrun");
  setenv("RANK", "three", 1);
  EXPECT_TRUE(refused(collcLauncherPlace(&Rank, &World, nullptr, nullptr, nullptr),
                      collcInvalidArgument, {"RANK"}));
  for (const char *V : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"})
    unsetenv(V);
  EXPECT_TRUE(refused(collcLauncherPlace(nullptr, &World, nullptr, nullptr, nullptr),
                      collcInvalidArgument, {"rank is NULL"}));
}

} // namespace
