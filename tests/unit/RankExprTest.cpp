#include "ir/Program.h"

#include "gtest/gtest.h"

using namespace collc;

namespace {
class RankExprTest : public ::testing::Test {
protected:
  Program P{"t", 8};
  const RankExpr *C(int64_t V) { return P.makeConst(V); }
  const RankExpr *R() { return P.makeExpr(RankExpr::Rank, {}); }
  const RankExpr *W() { return P.makeExpr(RankExpr::World, {}); }
  const RankExpr *B(RankExpr::Kind K, const RankExpr *L, const RankExpr *Rhs) {
    return P.makeExpr(K, {}, 0, L, Rhs);
  }
  int64_t eval(const RankExpr *E, int64_t Rank) {
    llvm::Expected<int64_t> V = E->evaluate(Rank, 8);
    EXPECT_TRUE(bool(V));
    if (!V) {
      llvm::consumeError(V.takeError());
      return -999;
    }
    return *V;
  }
};
} // namespace

TEST_F(RankExprTest, ArithmeticAndPredicates) {
  EXPECT_EQ(eval(B(RankExpr::Add, R(), C(1)), 3), 4);
  EXPECT_EQ(eval(B(RankExpr::Div, R(), C(2)), 7), 3);
  EXPECT_EQ(eval(B(RankExpr::Lt, R(), C(7)), 7), 0);
  EXPECT_EQ(eval(B(RankExpr::Lt, R(), C(7)), 6), 1);
  EXPECT_EQ(eval(B(RankExpr::Max, R(), C(5)), 2), 5);
  EXPECT_EQ(eval(B(RankExpr::Mod, R(), W()), 9), 1);
}

TEST_F(RankExprTest, FloorDivisionAndModuloWrapRings) {
  // (rank - 1) % world is the left neighbour in a ring, also at rank 0.
  const RankExpr *Left = B(RankExpr::Mod, B(RankExpr::Sub, R(), C(1)), W());
  EXPECT_EQ(eval(Left, 0), 7);
  EXPECT_EQ(eval(Left, 5), 4);
  EXPECT_EQ(eval(B(RankExpr::Div, B(RankExpr::Sub, R(), C(1)), C(2)), 0), -1);
}

TEST_F(RankExprTest, DivisionByZeroIsALocatedError) {
  const char *Src = "rank / 0";
  const RankExpr *E = P.makeExpr(RankExpr::Div, llvm::SMLoc::getFromPointer(Src + 5), 0, R(),
                                 B(RankExpr::Sub, R(), R()));
  llvm::Expected<int64_t> V = E->evaluate(3, 8);
  ASSERT_FALSE(bool(V));
  bool Seen = false;
  llvm::handleAllErrors(V.takeError(), [&](const RankExprError &Err) {
    Seen = true;
    EXPECT_EQ(Err.Loc.getPointer(), Src + 5);
    EXPECT_EQ(Err.Msg, "division by zero");
  });
  EXPECT_TRUE(Seen);
}

TEST_F(RankExprTest, OverflowIsAnError) {
  const RankExpr *E = B(RankExpr::Mul, C(INT64_MAX), C(2));
  llvm::Expected<int64_t> V = E->evaluate(0, 8);
  ASSERT_FALSE(bool(V));
  EXPECT_NE(llvm::toString(V.takeError()).find("overflow"), std::string::npos);
}

TEST_F(RankExprTest, ShortCircuitGuardsDivision) {
  // rank > 0 && 8 / rank > 2 must not divide by zero on rank 0.
  const RankExpr *E = B(RankExpr::And, B(RankExpr::Gt, R(), C(0)),
                        B(RankExpr::Gt, B(RankExpr::Div, C(8), R()), C(2)));
  EXPECT_EQ(eval(E, 0), 0);
  EXPECT_EQ(eval(E, 2), 1);
}

TEST_F(RankExprTest, PrintsMinimalParentheses) {
  EXPECT_EQ(B(RankExpr::Mul, B(RankExpr::Add, R(), C(1)), C(2))->str(), "(rank + 1) * 2");
  EXPECT_EQ(B(RankExpr::Add, R(), B(RankExpr::Mul, C(1), C(2)))->str(), "rank + 1 * 2");
  // Left associativity: a - (b - c) keeps its parentheses.
  EXPECT_EQ(B(RankExpr::Sub, R(), B(RankExpr::Sub, C(1), C(2)))->str(), "rank - (1 - 2)");
  EXPECT_EQ(B(RankExpr::Sub, B(RankExpr::Sub, R(), C(1)), C(2))->str(), "rank - 1 - 2");
  EXPECT_EQ(P.makeExpr(RankExpr::Neg, {}, 0, B(RankExpr::Add, R(), C(1)))->str(), "-(rank + 1)");
  EXPECT_EQ(B(RankExpr::Min, R(), C(3))->str(), "min(rank, 3)");
}

TEST_F(RankExprTest, DependsOnRank) {
  EXPECT_TRUE(B(RankExpr::Add, R(), C(1))->dependsOnRank());
  EXPECT_FALSE(B(RankExpr::Add, W(), C(1))->dependsOnRank());
  EXPECT_TRUE(RankExpr::equal(B(RankExpr::Add, R(), C(1)), B(RankExpr::Add, R(), C(1))));
  EXPECT_FALSE(RankExpr::equal(B(RankExpr::Add, R(), C(1)), B(RankExpr::Add, R(), C(2))));
}
