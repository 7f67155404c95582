//===- tests/runtime/ProcessAdaptersSuite.h - The interface adapters, one rank per process -*- C++
//-*-===//
//
// The three interface adapters (Communicator, DistributedSession,
// ServerCommunication) on a backend whose ranks are processes: each process
// runs its own rank and checks its own results, at any world of 2 or more.
// Written once over a backend's traits B:
//   B::name(), B::rank(), B::world();
//   B::communicator(Name, Size, Rank) -> Expected<shared_ptr<Communicator>>;
//   B::Session (HostSession<D>), B::server(DeviceId) -> unique_ptr<ServerCommunication>;
//   B::ServerSubgroups: whether a server group of some processes only can
//   be formed (false on a driver whose groups come from split: Unsupported).
// Values are small integers, so every sum is exact in any reduction order.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_RUNTIME_PROCESSADAPTERSSUITE_H
#define COLLC_TESTS_RUNTIME_PROCESSADAPTERSSUITE_H

#include "tests/runtime/RuntimeTestUtil.h"

#include "runtime/interfaces/Communicator.h"
#include "runtime/interfaces/DistributedSession.h"
#include "runtime/interfaces/ServerCommunication.h"

#include "gtest/gtest.h"

#include <cstring>
#include <numeric>

namespace collc::test {

template <typename B> void communicatorOnProcesses() {
  using namespace rt;
  const int R = B::rank(), W = B::world();
  auto C = B::communicator("interfaces.comm", W, R);
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  Communicator &Comm = **C;
  EXPECT_EQ(Comm.rank(), size_t(R));
  EXPECT_EQ(Comm.size(), size_t(W));

  std::vector<float> G = {float(R), float(2 * R), 9.0f};
  ASSERT_FALSE(bool(Comm.allReduce(ReduceOp::Sum, ElemType::F32, asBytes(G))));
  float S = float(W * (W - 1) / 2);
  EXPECT_EQ(G, (std::vector<float>{S, 2 * S, 9.0f * W}));

  std::vector<int32_t> In = {R, -R}, Out(2 * W), Want;
  for (int Q = 0; Q != W; ++Q)
    Want.insert(Want.end(), {Q, -Q});
  ASSERT_FALSE(bool(Comm.allGather(asConstBytes(In), asBytes(Out))));
  EXPECT_EQ(Out, Want);

  // sum_scatter: rank r gets the sum over q of q*100 + 2r + k.
  std::vector<int64_t> Chunks(2 * W), Mine(2);
  std::iota(Chunks.begin(), Chunks.end(), int64_t(R * 100));
  ASSERT_FALSE(bool(Comm.sumScatter(ElemType::I64, asConstBytes(Chunks), asBytes(Mine))));
  int64_t Base = 100 * W * (W - 1) / 2 + int64_t(W) * 2 * R;
  EXPECT_EQ(Mine, (std::vector<int64_t>{Base, Base + W}));

  // A ring of sends: even ranks send first (W even keeps it deadlock-free).
  std::vector<uint8_t> Msg(5, uint8_t(R)), Got(5);
  size_t Next = (R + 1) % W, Prev = (R + W - 1) % W;
  ASSERT_FALSE(bool(R % 2 ? Comm.recv(Prev, Got) : Comm.send(Next, Msg)));
  ASSERT_FALSE(bool(R % 2 ? Comm.send(Next, Msg) : Comm.recv(Prev, Got)));
  EXPECT_EQ(Got, std::vector<uint8_t>(5, uint8_t(Prev)));
  ASSERT_FALSE(bool(Comm.health()));

  // Split by parity, by descending key; rank 1 of a 2-world alone.
  auto Sub = Comm.split(R % 2, -R);
  ASSERT_TRUE(bool(Sub)) << llvm::toString(Sub.takeError());
  size_t Members = (W - R % 2 + 1) / 2;
  EXPECT_EQ((*Sub)->size(), Members);
  EXPECT_EQ((*Sub)->rank(), Members - 1 - R / 2);
  std::vector<double> One = {double(R)};
  ASSERT_FALSE(bool((*Sub)->allReduce(ReduceOp::Sum, ElemType::F64, asBytes(One))));
  double Parity = 0;
  for (int Q = R % 2; Q < W; Q += 2)
    Parity += Q;
  EXPECT_EQ(One[0], Parity);
}

inline rt::HostValue floatValue(std::vector<float> V, llvm::SmallVector<int64_t, 4> Shape) {
  rt::HostValue H = rt::HostValue::zeros({ElemType::F32, Shape});
  std::memcpy(H.Data->data(), V.data(), V.size() * 4);
  return H;
}
inline std::vector<float> floatsIn(const rt::HostValue &H) {
  return std::vector<float>(H.as<float>(), H.as<float>() + H.Desc.numElements());
}

/// Waits for a submission, failing the test on an error.
inline rt::HostValue waited(llvm::Expected<rt::Submission<rt::HostValue>> S) {
  if (!S) {
    ADD_FAILURE() << llvm::toString(S.takeError());
    return {};
  }
  llvm::Expected<rt::HostValue> V = S->Done->wait();
  if (!V) {
    ADD_FAILURE() << llvm::toString(V.takeError());
    return {};
  }
  return std::move(*V);
}

template <typename B> void sessionOnProcesses() {
  using namespace rt;
  const int R = B::rank(), W = B::world();
  auto S = B::Session::create("interfaces.session", W, R);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  DistributedSessionDescriptor D = (*S)->descriptor();
  EXPECT_EQ(D.Backend, B::name());
  EXPECT_EQ(D.WorldSize, size_t(W));
  EXPECT_EQ(D.Rank, size_t(R));
  auto Other = (*S)->allReduceSum(CollectiveScope{"tp"}, floatValue({1}, {1}));
  ASSERT_FALSE(bool(Other));
  EXPECT_EQ(factsOf(Other.takeError()).Kind, ErrorKind::Unsupported);
  auto World = CollectiveScope::world();

  HostValue Sum = waited((*S)->allReduceSum(World, floatValue({1, float(R)}, {2})));
  EXPECT_EQ(floatsIn(Sum), (std::vector<float>{float(W), float(W * (W - 1) / 2)}));

  HostValue Gather = waited((*S)->allGather(World, floatValue({float(R)}, {1})));
  EXPECT_EQ(Gather.Desc.Shape, (llvm::SmallVector<int64_t, 4>{W, 1}));
  std::vector<float> Ranks(W);
  std::iota(Ranks.begin(), Ranks.end(), 0.0f);
  EXPECT_EQ(floatsIn(Gather), Ranks);

  // Rows of two floats: rank r sends q + 1 rows to rank q, each {10r + q, -1}.
  std::vector<size_t> Send(W), Recv(W, size_t(R + 1));
  std::vector<float> Rows, Want;
  for (int Q = 0; Q != W; ++Q) {
    Send[Q] = Q + 1;
    for (int K = 0; K <= Q; ++K)
      Rows.insert(Rows.end(), {float(10 * R + Q), -1});
    for (int K = 0; K <= R; ++K)
      Want.insert(Want.end(), {float(10 * Q + R), -1});
  }
  HostValue A2A =
      waited((*S)->allToAllV(World, floatValue(Rows, {int64_t(Rows.size() / 2), 2}), Send, Recv));
  EXPECT_EQ(floatsIn(A2A), Want);

  // Rank 0 sends to the last rank.
  if (R == 0) {
    waited((*S)->send(World, W - 1, floatValue({4, 5, 6}, {3})));
  } else if (R == W - 1) {
    EXPECT_EQ(floatsIn(waited((*S)->receive(World, 0, ValueDescriptor{ElemType::F32, {3}}))),
              (std::vector<float>{4, 5, 6}));
  }

  uint32_t Word[1] = {uint32_t(7 + R)};
  auto Words = (*S)->allGatherWords(Word);
  ASSERT_TRUE(bool(Words)) << llvm::toString(Words.takeError());
  std::vector<uint32_t> WantWords(W);
  std::iota(WantWords.begin(), WantWords.end(), 7u);
  EXPECT_EQ(*Words, WantWords);
}

template <typename B> void serverOnProcesses() {
  using namespace rt;
  const int R = B::rank(), W = B::world();
  std::unique_ptr<ServerCommunication> S = B::server(DeviceId(R));
  EXPECT_TRUE(S->serverCommEnabled());
  std::vector<DeviceId> All(W);
  std::iota(All.begin(), All.end(), 0u);
  ASSERT_FALSE(bool(S->commInit(All)));
  std::vector<int32_t> Src = {R, 1}, Dst(2);
  ASSERT_FALSE(bool(S->allReduce({Src.data(), 8}, {Dst.data(), 8}, ElemType::I32, /*Stream=*/3,
                                 ReduceOp::Sum, All)));
  ASSERT_FALSE(bool(S->syncCollective(3)));
  EXPECT_EQ(Dst, (std::vector<int32_t>{W * (W - 1) / 2, W}));

  // Device 0 sends a 2x3 row-major block to the last device.
  std::vector<float> Block = {1, 2, 3, 4, 5, 6}, Got(6);
  if (R == 0) {
    ASSERT_FALSE(bool(S->send({{Block.data(), 24}, {2, 3}, {3, 1}, 4}, ElemType::F32, 0, W - 1)));
    ASSERT_FALSE(bool(S->syncCollective(0)));
  } else if (R == W - 1) {
    ASSERT_FALSE(bool(S->recv({Got.data(), 24}, ElemType::F32, 0, 0)));
    ASSERT_FALSE(bool(S->syncCollective(0)));
    EXPECT_EQ(Got, Block);
  }

  // The group of devices 0 and 1 only.
  const std::vector<DeviceId> Pair = {0, 1};
  std::vector<int32_t> P = {R + 1}, PSum(1);
  if (R > 1)
    return;
  llvm::Error E =
      S->allReduce({P.data(), 4}, {PSum.data(), 4}, ElemType::I32, 5, ReduceOp::Sum, Pair);
  if (B::ServerSubgroups || W == 2) {
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    ASSERT_FALSE(bool(S->syncCollective(5)));
    EXPECT_EQ(PSum[0], 3);
  } else {
    ErrorFacts F = factsOf(std::move(E));
    EXPECT_EQ(F.Kind, ErrorKind::Unsupported) << F.Text;
    EXPECT_NE(F.Text.find("group of 2 of its " + std::to_string(W) + " processes"),
              std::string::npos)
        << F.Text;
  }
}

} // namespace collc::test

/// The three tests, for backend traits \p B.
#define COLLC_PROCESS_ADAPTER_TESTS(B, Prefix)                                                     \
  TEST(Prefix, CommunicatorCollectivesPointToPointAndSplit) {                                      \
    collc::test::communicatorOnProcesses<B>();                                                     \
  }                                                                                                \
  TEST(Prefix, SessionSubmissionsCompleteWithTheirResults) {                                       \
    collc::test::sessionOnProcesses<B>();                                                          \
  }                                                                                                \
  TEST(Prefix, ServerCollectivesAndPointToPointByDeviceId) { collc::test::serverOnProcesses<B>(); }

#endif
