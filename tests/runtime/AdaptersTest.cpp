//===- tests/runtime/AdaptersTest.cpp - The runtime's interfaces over `local` ---===//

#include "tests/runtime/RuntimeTestUtil.h"

#include "runtime/local/LocalCommunicator.h"
#include "runtime/local/LocalSession.h"
#include "runtime/local/LocalServer.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace collc;
using namespace collc::rt;
using namespace collc::test;
using llvm::Error;
using llvm::Expected;

namespace {

// --- Communicator -------------------------------------------------

TEST(CommunicatorTest, CollectivesPointToPointAndSplit) {
  constexpr int World = 3;
  std::string Name = freshName("comm");
  std::vector<std::string> Errors(World);
  onThreads(World, [&](int R) {
    auto Fail = [&](const std::string &What, Error E) {
      Errors[R] = What + ": " + llvm::toString(std::move(E));
    };
    Expected<std::shared_ptr<Communicator>> C = createLocalCommunicator(Name, World, R);
    if (!C)
      return Fail("create", C.takeError());
    Communicator &Comm = **C;
    EXPECT_EQ(Comm.rank(), size_t(R));
    EXPECT_EQ(Comm.size(), size_t(World));

    std::vector<float> G = {float(R), float(2 * R), 9.0f};
    if (Error E = Comm.allReduce(ReduceOp::Avg, ElemType::F32, asBytes(G)))
      return Fail("all_reduce", std::move(E));
    EXPECT_EQ(G, (std::vector<float>{1.0f, 2.0f, 9.0f}));

    std::vector<int32_t> In = {R, -R}, Out(2 * World);
    if (Error E = Comm.allGather(asConstBytes(In), asBytes(Out)))
      return Fail("all_gather", std::move(E));
    EXPECT_EQ(Out, (std::vector<int32_t>{0, 0, 1, -1, 2, -2}));

    // sum_scatter: rank r gets the sum of every rank's r-th chunk.
    std::vector<int64_t> Chunks(2 * World), Mine(2);
    std::iota(Chunks.begin(), Chunks.end(), int64_t(R * 100));
    if (Error E = Comm.sumScatter(ElemType::I64, asConstBytes(Chunks), asBytes(Mine)))
      return Fail("sum_scatter", std::move(E));
    // sum over q of (q * 100 + 2r + k) = 300 + 3 * (2r + k)
    EXPECT_EQ(Mine, (std::vector<int64_t>{300 + 6 * R, 300 + 6 * R + 3}));

    // A ring of sends: even ranks send first.
    std::vector<uint8_t> Msg(5, uint8_t(R)), Got(5);
    size_t Next = (R + 1) % World, Prev = (R + World - 1) % World;
    Error E1 = R % 2 ? Comm.recv(Prev, Got) : Comm.send(Next, Msg);
    if (E1)
      return Fail("first of send/recv", std::move(E1));
    Error E2 = R % 2 ? Comm.send(Next, Msg) : Comm.recv(Prev, Got);
    if (E2)
      return Fail("second of send/recv", std::move(E2));
    EXPECT_EQ(Got, std::vector<uint8_t>(5, uint8_t(Prev)));

    if (Error E = Comm.health())
      return Fail("health", std::move(E));

    // Split: ranks {0, 2} by descending key; rank 1 alone.
    Expected<std::shared_ptr<Communicator>> Sub = Comm.split(R == 1 ? 1 : 0, -R);
    if (!Sub)
      return Fail("split", Sub.takeError());
    EXPECT_EQ((*Sub)->size(), R == 1 ? 1u : 2u);
    EXPECT_EQ((*Sub)->rank(), R == 0 ? 1u : 0u);
    std::vector<double> One = {double(R)};
    if (Error E = (*Sub)->allReduce(ReduceOp::Sum, ElemType::F64, asBytes(One)))
      return Fail("all_reduce on the split", std::move(E));
    EXPECT_EQ(One[0], R == 1 ? 1.0 : 2.0);
  });
  for (int R = 0; R != World; ++R)
    EXPECT_EQ(Errors[R], "") << "rank " << R;
}

TEST(CommunicatorTest, WrongSizesAreErrorsNotCrashes) {
  std::string Name = freshName("comm.bad");
  std::vector<ErrorFacts> Gather(2), Scatter(2), Partial(2);
  onThreads(2, [&](int R) {
    Expected<std::shared_ptr<Communicator>> C = createLocalCommunicator(Name, 2, R);
    ASSERT_TRUE(bool(C));
    std::vector<uint8_t> In(4), Out(7);
    Gather[R] = factsOf((*C)->allGather(In, Out));
    Scatter[R] = factsOf((*C)->sumScatter(ElemType::F32, In, Out));
    std::vector<uint8_t> Odd(6);
    Partial[R] = factsOf((*C)->allReduce(ReduceOp::Sum, ElemType::F32, Odd));
  });
  for (int R = 0; R != 2; ++R) {
    EXPECT_EQ(Gather[R].Kind, ErrorKind::InvalidArgument) << Gather[R].Text;
    EXPECT_NE(Gather[R].Text.find("7"), std::string::npos) << Gather[R].Text;
    EXPECT_TRUE(Scatter[R].Failed);
    EXPECT_TRUE(Partial[R].Failed);
    EXPECT_NE(Partial[R].Text.find("6"), std::string::npos) << Partial[R].Text;
  }
}

// --- DistributedSession ------------------------------------------

HostValue valueOf(std::vector<float> V, llvm::SmallVector<int64_t, 4> Shape) {
  HostValue H = HostValue::zeros({ElemType::F32, Shape});
  std::memcpy(H.Data->data(), V.data(), V.size() * 4);
  return H;
}

std::vector<float> floatsOf(const HostValue &H) {
  return std::vector<float>(H.as<float>(), H.as<float>() + H.Desc.numElements());
}

TEST(LocalSessionTest, DescriptorAndFailClosedCapabilities) {
  DistributedCapabilities None;
  EXPECT_FALSE(None.AllReduceSum || None.AllGather || None.AllToAllV || None.SendReceive ||
               None.AllGatherWords)
      << "a session claims nothing it does not say";
  Expected<std::unique_ptr<LocalSession>> S = LocalSession::create(freshName("sess"), 1, 0);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  DistributedSessionDescriptor D = (*S)->descriptor();
  EXPECT_EQ(D.Backend, "local");
  EXPECT_EQ(D.WorldSize, 1u);
  EXPECT_EQ(D.Device, "cpu");
  DistributedCapabilities C = (*S)->capabilities();
  EXPECT_TRUE(C.AllReduceSum && C.AllGather && C.AllToAllV && C.SendReceive && C.AllGatherWords);
  // A scope it was not selected for is refused, not guessed.
  Expected<Submission<HostValue>> Other =
      (*S)->allReduceSum(CollectiveScope{"tp"}, valueOf({1}, {1}));
  ASSERT_FALSE(bool(Other));
  EXPECT_EQ(factsOf(Other.takeError()).Kind, ErrorKind::Unsupported);
  // A value whose memory disagrees with its descriptor is refused.
  HostValue Bad = valueOf({1, 2}, {2});
  Bad.Desc.Shape = {3};
  Expected<Submission<HostValue>> Refused = (*S)->allReduceSum(CollectiveScope::world(), Bad);
  ASSERT_FALSE(bool(Refused));
  EXPECT_EQ(factsOf(Refused.takeError()).Kind, ErrorKind::InvalidArgument);
  Expected<Submission<HostValue>> Negative =
      (*S)->receive(CollectiveScope::world(), 0, ValueDescriptor{ElemType::F32, {-2, -3}});
  ASSERT_FALSE(bool(Negative));
  llvm::consumeError(Negative.takeError());
}

TEST(LocalSessionTest, SubmissionsCompleteWithTheirResults) {
  constexpr int World = 2;
  std::string Name = freshName("sess");
  std::vector<std::string> Errors(World);
  onThreads(World, [&](int R) {
    auto Fail = [&](const std::string &What, Error E) {
      Errors[R] = What + ": " + llvm::toString(std::move(E));
    };
    Expected<std::unique_ptr<LocalSession>> S = LocalSession::create(Name, World, R);
    if (!S)
      return Fail("create", S.takeError());
    auto W = CollectiveScope::world();

    Expected<Submission<HostValue>> Sum = (*S)->allReduceSum(W, valueOf({1, float(R)}, {2}));
    if (!Sum)
      return Fail("all_reduce_sum", Sum.takeError());
    Expected<HostValue> SumV = Sum->Done->wait();
    if (!SumV)
      return Fail("wait all_reduce_sum", SumV.takeError());
    EXPECT_EQ(floatsOf(*SumV), (std::vector<float>{2, 1}));
    Expected<HostValue> Twice = Sum->Done->wait();
    EXPECT_FALSE(bool(Twice)) << "a completion is waited for once";
    if (!Twice)
      llvm::consumeError(Twice.takeError());

    Expected<Submission<HostValue>> Gather = (*S)->allGather(W, valueOf({float(R)}, {1}));
    if (!Gather)
      return Fail("all_gather", Gather.takeError());
    Expected<HostValue> GatherV = Gather->Done->wait();
    if (!GatherV)
      return Fail("wait all_gather", GatherV.takeError());
    EXPECT_EQ(GatherV->Desc.Shape, (llvm::SmallVector<int64_t, 4>{2, 1}));
    EXPECT_EQ(floatsOf(*GatherV), (std::vector<float>{0, 1}));

    // Rows of two floats: rank 0 sends 1 row to itself and 2 to rank 1;
    // rank 1 sends 0 to rank 0 and 1 to itself.
    std::vector<size_t> Send = R == 0 ? std::vector<size_t>{1, 2} : std::vector<size_t>{0, 1};
    std::vector<size_t> Recv = R == 0 ? std::vector<size_t>{1, 0} : std::vector<size_t>{2, 1};
    std::vector<float> Rows;
    for (size_t K = 0; K != Send[0] + Send[1]; ++K)
      Rows.insert(Rows.end(), {float(R * 10 + K), -1});
    Expected<Submission<HostValue>> A2A =
        (*S)->allToAllV(W, valueOf(Rows, {int64_t(Rows.size() / 2), 2}), Send, Recv);
    if (!A2A)
      return Fail("all_to_all_v", A2A.takeError());
    Expected<HostValue> A2AV = A2A->Done->wait();
    if (!A2AV)
      return Fail("wait all_to_all_v", A2AV.takeError());
    if (R == 0)
      EXPECT_EQ(floatsOf(*A2AV), (std::vector<float>{0, -1}));
    else
      EXPECT_EQ(floatsOf(*A2AV), (std::vector<float>{1, -1, 2, -1, 10, -1}));

    if (R == 0) {
      Expected<Submission<HostValue>> Sent = (*S)->send(W, 1, valueOf({4, 5, 6}, {3}));
      if (!Sent)
        return Fail("send", Sent.takeError());
      if (Expected<HostValue> V = Sent->Done->wait(); !V)
        return Fail("wait send", V.takeError());
    } else {
      Expected<Submission<HostValue>> Got =
          (*S)->receive(W, 0, ValueDescriptor{ElemType::F32, {3}});
      if (!Got)
        return Fail("receive", Got.takeError());
      Expected<HostValue> V = Got->Done->wait();
      if (!V)
        return Fail("wait receive", V.takeError());
      EXPECT_EQ(floatsOf(*V), (std::vector<float>{4, 5, 6}));
    }

    uint32_t Word[1] = {uint32_t(7 + R)};
    Expected<std::vector<uint32_t>> Words = (*S)->allGatherWords(Word);
    if (!Words)
      return Fail("all_gather_words", Words.takeError());
    EXPECT_EQ(*Words, (std::vector<uint32_t>{7, 8}));
  });
  for (int R = 0; R != World; ++R)
    EXPECT_EQ(Errors[R], "") << "rank " << R;
}

// --- ServerCommunication -----------------------------------------

TEST(ServerCommunicationTest, AServerWithoutCommunicationRefuses) {
  ServerCommunication Plain;
  EXPECT_FALSE(Plain.serverCommEnabled());
  ErrorFacts F = factsOf(Plain.commInit({0, 1}));
  EXPECT_EQ(F.Kind, ErrorKind::Unsupported);
  EXPECT_NE(F.Text.find("comm_init"), std::string::npos) << F.Text;
  EXPECT_EQ(factsOf(Plain.syncCollective(0)).Kind, ErrorKind::Unsupported);
}

TEST(ServerCommunicationTest, CollectivesAndPointToPointByDeviceId) {
  // Devices 40, 41, 42: ids, not ranks (the server orders them).
  const std::vector<DeviceId> Devices = {42, 40, 41};
  std::vector<std::string> Errors(3);
  onThreads(3, [&](int Index) {
    DeviceId Me = Devices[Index];
    LocalServer S(Me);
    auto Fail = [&](const std::string &What, Error E) {
      Errors[Index] = What + ": " + llvm::toString(std::move(E));
    };
    EXPECT_TRUE(S.serverCommEnabled());
    if (Error E = S.commInit(Devices))
      return Fail("comm_init", std::move(E));
    std::vector<int32_t> Src = {int32_t(Me), 1}, Dst(2);
    if (Error E = S.allReduce({Src.data(), 8}, {Dst.data(), 8}, ElemType::I32, /*Stream=*/3,
                              ReduceOp::Sum, Devices))
      return Fail("all_reduce", std::move(E));
    if (Error E = S.syncCollective(3))
      return Fail("sync_collective", std::move(E));
    EXPECT_EQ(Dst, (std::vector<int32_t>{123, 3}));
    // Device 40 sends a 2x3 row-major block to device 42.
    if (Me == 40) {
      std::vector<float> Block = {1, 2, 3, 4, 5, 6};
      CopyDescriptor Desc{{Block.data(), 24}, {2, 3}, {3, 1}, 4};
      if (Error E = S.send(Desc, ElemType::F32, 0, 42))
        return Fail("send", std::move(E));
      if (Error E = S.syncCollective(0))
        return Fail("sync send", std::move(E));
    } else if (Me == 42) {
      std::vector<float> Got(6);
      if (Error E = S.recv({Got.data(), 24}, ElemType::F32, 0, 40))
        return Fail("recv", std::move(E));
      if (Error E = S.syncCollective(0))
        return Fail("sync recv", std::move(E));
      EXPECT_EQ(Got, (std::vector<float>{1, 2, 3, 4, 5, 6}));
    }
  });
  for (int I = 0; I != 3; ++I)
    EXPECT_EQ(Errors[I], "") << "device " << Devices[I];
}

TEST(ServerCommunicationTest, BadRequestsAreClearErrors) {
  LocalServer S(77);
  std::vector<float> B(6);
  ErrorFacts Early = factsOf(S.recv({B.data(), 24}, ElemType::F32, 0, 78));
  EXPECT_EQ(Early.Kind, ErrorKind::InvalidArgument);
  EXPECT_NE(Early.Text.find("comm_init"), std::string::npos) << Early.Text;
  ErrorFacts NotMine = factsOf(S.commInit({1, 2}));
  EXPECT_NE(NotMine.Text.find("77"), std::string::npos) << NotMine.Text;
  ErrorFacts Twice = factsOf(S.commInit({77, 77}));
  EXPECT_NE(Twice.Text.find("twice"), std::string::npos) << Twice.Text;
  ASSERT_FALSE(bool(S.commInit({77})));
  // Column-major data is not row-contiguous: refused, naming the stride.
  CopyDescriptor ColumnMajor{{B.data(), 24}, {2, 3}, {1, 2}, 4};
  ErrorFacts Strided = factsOf(S.send(ColumnMajor, ElemType::F32, 0, 77));
  EXPECT_EQ(Strided.Kind, ErrorKind::Unsupported) << Strided.Text;
  ErrorFacts Outsider = factsOf(S.send({{B.data(), 24}, {6}, {}, 4}, ElemType::F32, 0, 5));
  EXPECT_NE(Outsider.Text.find("5"), std::string::npos) << Outsider.Text;
}

} // namespace
