//===- tests/conformance/InterfaceEdgeCasesTest.cpp - The interfaces' corner cases===//
//
// What the runtime's interfaces promise beyond plain collectives, checked at the
// driver level (the adapters forward to it): split ordering by key with a
// color of one rank, a receive of exactly the bytes sent, all_gather_words
// in rank order, and arguments refused as error values.
//
//===----------------------------------------------------------------------===//

#include "tests/conformance/DriverHarness.h"

#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

#include <atomic>
#include <mutex>

using namespace collc;
using namespace collc::rt;
using llvm::Error;
using llvm::Expected;

namespace {

template <typename H> class InterfaceEdgeCases : public testing::Test {
protected:
  using D = typename H::Driver;

  void SetUp() override {
    if (std::string Why = H::unavailable(); !Why.empty())
      GTEST_SKIP() << Why;
  }

  static std::string uniqueName() {
    static std::atomic<unsigned> Counter{0};
    return llvm::formatv("seed.{0}.{1}", H::name(), Counter++).str();
  }

  /// Joins \p World ranks to one new group and runs \p Body on each.
  void withGroup(
      int World,
      std::function<void(int R, typename D::Communicator &C, typename D::CommStream S)> Body) {
    std::string Name = uniqueName();
    H::runRanks(World, [&](int R) {
      Expected<typename D::UniqueId> Id = D::groupId({Name});
      ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
      Expected<typename D::Communicator> C = D::join(*Id, World, R);
      ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
      auto S = D::createStream("seed");
      Body(R, *C, D::streamOf(S));
    });
  }

  static std::string errorText(Error E) { return E ? llvm::toString(std::move(E)) : ""; }
  static ErrorKind kindOf(Error E) {
    ErrorKind K = ErrorKind::Backend;
    llvm::handleAllErrors(std::move(E), [&](const RuntimeError &R) { K = R.kind(); });
    return K;
  }
};

using Harnesses = testing::Types<test::DriverHarness<local::LocalDriver>>;
TYPED_TEST_SUITE(InterfaceEdgeCases, Harnesses);

TYPED_TEST(InterfaceEdgeCases, GroupIdIsMintedOnceAndRemembered) {
  using D = typename TestFixture::D;
  std::string Name = TestFixture::uniqueName();
  Expected<typename D::UniqueId> A = D::groupId({Name});
  Expected<typename D::UniqueId> B = D::groupId({Name});
  Expected<typename D::UniqueId> Other = D::groupId({Name + ".other"});
  ASSERT_TRUE(A && B && Other);
  EXPECT_EQ(*A, *B);
  EXPECT_NE(*A, *Other);
}

TYPED_TEST(InterfaceEdgeCases, JoinRefusesBadRanks) {
  using D = typename TestFixture::D;
  Expected<typename D::UniqueId> Id = D::groupId({TestFixture::uniqueName()});
  ASSERT_TRUE(bool(Id));
  Expected<typename D::Communicator> Past = D::join(*Id, 2, 2);
  ASSERT_FALSE(bool(Past));
  EXPECT_NE(llvm::toString(Past.takeError()).find("2"), std::string::npos);
  Expected<typename D::Communicator> Empty = D::join(*Id, 0, 0);
  ASSERT_FALSE(bool(Empty));
  llvm::consumeError(Empty.takeError());
}

TYPED_TEST(InterfaceEdgeCases, ElementsIsAnErrorValueNotFatal) {
  using D = typename TestFixture::D;
  Expected<Elements<typename D::DataType>> Whole = D::elements(ElemType::F32, 64);
  ASSERT_TRUE(bool(Whole)) << llvm::toString(Whole.takeError());
  EXPECT_EQ(Whole->Count, 16u);
  Expected<Elements<typename D::DataType>> Partial = D::elements(ElemType::F32, 6);
  ASSERT_FALSE(bool(Partial));
  std::string Text = llvm::toString(Partial.takeError());
  EXPECT_NE(Text.find("6"), std::string::npos) << Text;
  Expected<Elements<typename D::DataType>> Unknown = D::elements(ElemType(200), 8);
  ASSERT_FALSE(bool(Unknown));
  llvm::consumeError(Unknown.takeError());
}

TYPED_TEST(InterfaceEdgeCases, SplitOrdersByKeyAndAllowsAOneRankColor) {
  using D = typename TestFixture::D;
  // Five ranks: 0..3 take color 0 with keys that reverse them; rank 4 is
  // alone in color 1. A negative color gets no communicator.
  constexpr int World = 5;
  std::vector<std::vector<uint32_t>> Seen(World);
  std::vector<int> NewRank(World, -1), NewSize(World, -1);
  std::vector<std::string> Errors(World);
  this->withGroup(World, [&](int R, auto &C, auto) {
    int Color = R < 4 ? 0 : 1;
    Expected<typename D::Communicator> Sub = D::split(C, Color, 10 - R);
    if (!Sub) {
      Errors[R] = llvm::toString(Sub.takeError());
      return;
    }
    NewRank[R] = (*Sub)->rank();
    NewSize[R] = (*Sub)->size();
    uint32_t Mine[1] = {uint32_t(100 + R)};
    Expected<std::vector<uint32_t>> All = D::allGatherWords(*Sub, Mine);
    if (!All) {
      Errors[R] = llvm::toString(All.takeError());
      return;
    }
    Seen[R] = *All;
    // Color -1 on rank 0 only... must still be collective: everyone splits.
    Expected<typename D::Communicator> None = D::split(C, R == 0 ? -1 : 2, R);
    if (!None) {
      Errors[R] = llvm::toString(None.takeError());
      return;
    }
    if ((R == 0) != (*None == nullptr))
      Errors[R] = "a negative color must give no communicator, others one";
  });
  for (int R = 0; R != World; ++R)
    ASSERT_EQ(Errors[R], "") << "rank " << R;
  for (int R = 0; R != 4; ++R) {
    EXPECT_EQ(NewRank[R], 3 - R) << "key 10 - r reverses ranks 0..3";
    EXPECT_EQ(NewSize[R], 4);
    EXPECT_EQ(Seen[R], (std::vector<uint32_t>{103, 102, 101, 100}));
  }
  EXPECT_EQ(NewRank[4], 0);
  EXPECT_EQ(NewSize[4], 1);
  EXPECT_EQ(Seen[4], (std::vector<uint32_t>{104}));
}

TYPED_TEST(InterfaceEdgeCases, SplitBreaksKeyTiesByRank) {
  using D = typename TestFixture::D;
  std::vector<int> NewRank(3, -1);
  this->withGroup(3, [&](int R, auto &C, auto) {
    Expected<typename D::Communicator> Sub = D::split(C, 7, /*Key=*/0);
    ASSERT_TRUE(bool(Sub)) << llvm::toString(Sub.takeError());
    NewRank[R] = (*Sub)->rank();
  });
  EXPECT_EQ(NewRank, (std::vector<int>{0, 1, 2}));
}

TYPED_TEST(InterfaceEdgeCases, RecvOfExactlyTheSentBytes) {
  using D = typename TestFixture::D;
  std::vector<std::string> Errors(2);
  std::vector<uint32_t> Got(16, 0);
  this->withGroup(2, [&](int R, auto &C, auto S) {
    std::vector<uint32_t> Data(16);
    for (unsigned I = 0; I != 16; ++I)
      Data[I] = 1000 + I;
    Error E = R == 0 ? D::send(C, D::resource(Data.data(), 64), {ElemType::U32, 16}, 1, S)
                     : D::recv(C, D::resource(Got.data(), 64), {ElemType::U32, 16}, 0, S);
    if (!E)
      E = D::synchronize(S);
    Errors[R] = TestFixture::errorText(std::move(E));
  });
  EXPECT_EQ(Errors[0], "");
  EXPECT_EQ(Errors[1], "");
  for (unsigned I = 0; I != 16; ++I)
    EXPECT_EQ(Got[I], 1000 + I);
}

TYPED_TEST(InterfaceEdgeCases, RecvOfOtherBytesFailsOnBothSidesAndWritesNothing) {
  using D = typename TestFixture::D;
  std::vector<ErrorKind> Kinds(2, ErrorKind::Backend);
  std::vector<char> Failed(2, 0); // not vector<bool>: ranks write their own
  std::vector<std::string> Texts(2);
  std::vector<uint32_t> Got(17, 0xdead);
  this->withGroup(2, [&](int R, auto &C, auto S) {
    D::setTimeout(C, std::chrono::milliseconds(5000));
    std::vector<uint32_t> Data(16, 7);
    Error E = R == 0 ? D::send(C, D::resource(Data.data(), 64), {ElemType::U32, 16}, 1, S)
                     : D::recv(C, D::resource(Got.data(), 68), {ElemType::U32, 17}, 0, S);
    if (!E)
      E = D::synchronize(S);
    Failed[R] = E ? 1 : 0;
    if (E) {
      std::string Text;
      llvm::handleAllErrors(std::move(E), [&](const RuntimeError &X) {
        Kinds[R] = X.kind();
        Text = X.text();
      });
      Texts[R] = Text;
    }
  });
  for (int R = 0; R != 2; ++R) {
    EXPECT_TRUE(Failed[R]) << "rank " << R << " accepted a size mismatch";
    EXPECT_EQ(Kinds[R], ErrorKind::Mismatch) << Texts[R];
    EXPECT_NE(Texts[R].find("64"), std::string::npos) << Texts[R];
    EXPECT_NE(Texts[R].find("68"), std::string::npos) << Texts[R];
  }
  for (uint32_t V : Got)
    EXPECT_EQ(V, 0xdeadu) << "a refused receive wrote its buffer";
}

TYPED_TEST(InterfaceEdgeCases, AllGatherWordsInRankOrder) {
  using D = typename TestFixture::D;
  std::vector<std::vector<uint32_t>> Seen(3);
  this->withGroup(3, [&](int R, auto &C, auto) {
    uint32_t Mine[2] = {uint32_t(R), uint32_t(R * R + 40)};
    Expected<std::vector<uint32_t>> All = D::allGatherWords(C, Mine);
    ASSERT_TRUE(bool(All)) << llvm::toString(All.takeError());
    Seen[R] = *All;
  });
  for (int R = 0; R != 3; ++R)
    EXPECT_EQ(Seen[R], (std::vector<uint32_t>{0, 40, 1, 41, 2, 44}));
}

TYPED_TEST(InterfaceEdgeCases, AllGatherWordsOfDifferentLengthsIsAMismatch) {
  using D = typename TestFixture::D;
  std::vector<std::string> Errors(2);
  this->withGroup(2, [&](int R, auto &C, auto) {
    std::vector<uint32_t> Mine(R + 1, 5);
    Expected<std::vector<uint32_t>> All = D::allGatherWords(C, Mine);
    Errors[R] = All ? "" : llvm::toString(All.takeError());
  });
  EXPECT_NE(Errors[0], "");
  EXPECT_NE(Errors[1], "");
}

TYPED_TEST(InterfaceEdgeCases, OnlyTheBroadcastRootHasASource) {
  using D = typename TestFixture::D;
  Expected<typename D::UniqueId> Id = D::groupId({TestFixture::uniqueName()});
  ASSERT_TRUE(bool(Id));
  Expected<typename D::Communicator> C = D::join(*Id, 1, 0);
  ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
  auto S = D::createStream("seed");
  std::vector<float> Buf(4);
  auto R = D::resource(Buf.data(), 16);
  Error NoSource = D::broadcast(*C, nullptr, R, {ElemType::F32, 4}, 0, D::streamOf(S));
  EXPECT_EQ(TestFixture::kindOf(std::move(NoSource)), ErrorKind::InvalidArgument);
  Error BadRoot = D::broadcast(*C, &R, R, {ElemType::F32, 4}, 3, D::streamOf(S));
  EXPECT_EQ(TestFixture::kindOf(std::move(BadRoot)), ErrorKind::InvalidArgument);
  Error Short = D::allReduce(*C, R, R, {ElemType::F32, 5}, ReduceOp::Sum, D::streamOf(S));
  std::string Text = TestFixture::errorText(std::move(Short));
  EXPECT_NE(Text.find("16"), std::string::npos) << Text;
  EXPECT_NE(Text.find("20"), std::string::npos) << Text;
}

} // namespace
