// Program::clone: a deep copy that prints byte-identically to its original,
// owns everything it refers to, and can be changed without touching it.
#include "TestUtil.h"

#include <vector>

using namespace collc;
using namespace collc::test;

namespace {

// Everything clone must carry: a split group, explicit ranks, predicates,
// peers and roots, attributes (int and string, with escapes), async ops,
// all_to_all_v with a static split matrix and with a counts operand.
const char *EveryFeature = R"(program @every_feature world(4) {
  group @dp = world
  group @tp = split(rank / 2, rank % 2)
  group @odd = split(rank % 2 - 1, -rank)
  group @pair = ranks [0, 1]
  %g = compute @bwd cost(12us) stream(1) : f32[8, 4] {why = "tab\there \"q\" back\\slash"}
  %c = compute @route : i64[4]
  %r = all_reduce async premul_sum(0.125) %g in @dp : f32[8, 4] {bucket = 0, why = "a \"b\""}
  wait %r
  %bc = broadcast %g root (1 - rank % 2) in @tp : f32[8, 4]
  %v = all_to_all_v %g in @dp splits %c : f32[16, 4]
  %w = all_to_all_v %g in @pair splits [[1, 2], [3, 4]] : f32[8, 4] when rank < 2
  send %g to (rank + 1) when rank < 3 && !(rank == 7)
  %x = recv from (rank - 1) : f32[8, 4] when rank > 0
  compute @opt(%r, %bc, %v) cost(3ms) {step = -1}
}
)";

} // namespace

TEST(Clone, PrintsLikeTheOriginalOnEveryExample) {
  for (const std::string &Path : exampleFiles()) {
    ParsedProgram P = parseOK(readOK(Path), Path);
    ASSERT_NE(P.Prog, nullptr) << Path;
    std::unique_ptr<Program> C = P.Prog->clone();
    EXPECT_EQ(printProgram(*C), printProgram(*P.Prog)) << Path;
  }
}

TEST(Clone, CarriesEveryFeatureAndOwnsItsStrings) {
  std::string Text;
  std::unique_ptr<Program> C;
  {
    ParsedProgram P = parseOK(EveryFeature);
    ASSERT_NE(P.Prog, nullptr);
    Text = printProgram(*P.Prog);
    C = P.Prog->clone();
    EXPECT_EQ(C->sourceMgr(), P.Prog->sourceMgr());
    ASSERT_EQ(C->ops().size(), P.Prog->ops().size());
    for (size_t I = 0; I != C->ops().size(); ++I)
      EXPECT_EQ(C->ops()[I].Loc.getPointer(), P.Prog->ops()[I].Loc.getPointer()) << I;
    // Resolved membership, not only the expressions.
    const Group &Odd = C->group(C->lookupGroup("odd"));
    EXPECT_EQ(Odd.subgroups(), P.Prog->group(P.Prog->lookupGroup("odd")).subgroups());
    EXPECT_EQ(Odd.subgroups(), (llvm::ArrayRef<std::vector<int32_t>>{{3, 1}}));
    DiagnosticEngine Diags(P.Source.get());
    llvm::Error E = verifyProgram(*C, Diags);
    EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
  } // The original and its arena are gone (the source too: C's locations
    // point into it, so C no longer renders diagnostics).
  EXPECT_EQ(printProgram(*C), Text);
  EXPECT_EQ(C->lookupValue("x"), 6u);
  EXPECT_EQ(C->value(C->lookupValue("x")).Def, 8u);
}

TEST(Clone, ChangingTheCloneLeavesTheOriginal) {
  ParsedProgram P = parseOK(EveryFeature);
  ASSERT_NE(P.Prog, nullptr);
  const std::string Before = printProgram(*P.Prog);
  std::unique_ptr<Program> C = P.Prog->clone();

  C->setName("changed");
  C->ops()[2].setAttr("bucket", int64_t(9));
  C->ops()[2].setAttr("why", C->save("rewritten"));
  C->ops()[6].Splits[0] = 42;
  C->ops()[7].When = C->makeConst(1);
  C->ops().erase(C->ops().begin() + 3); // the wait
  C->recomputeDefs();
  ASSERT_TRUE(bool(C->addValue("fresh", TensorType(ElemType::F16, {2}))));
  Group G;
  G.Name = "late";
  ASSERT_TRUE(bool(C->addGroup(G)));

  EXPECT_EQ(printProgram(*P.Prog), Before);
  EXPECT_EQ(P.Prog->lookupValue("fresh"), InvalidId);
  EXPECT_EQ(P.Prog->lookupGroup("late"), InvalidId);
  EXPECT_NE(printProgram(*C), Before);
}

TEST(Clone, SharedExpressionsStaySharedInTheCopy) {
  Program P("shared", 4);
  const RankExpr *Pred =
      P.makeExpr(RankExpr::Lt, {}, 0, P.makeExpr(RankExpr::Rank, {}), P.makeConst(2));
  for (int I = 0; I != 2; ++I) {
    Op O;
    O.Kind = OpKind::Barrier;
    O.When = Pred;
    P.addOp(O);
  }
  Group G;
  G.Name = "w";
  ASSERT_TRUE(bool(P.addGroup(G)));
  for (Op &O : P.ops())
    O.Group = 0;
  std::unique_ptr<Program> C = P.clone();
  EXPECT_EQ(C->ops()[0].When, C->ops()[1].When);
  EXPECT_NE(C->ops()[0].When, Pred);
  EXPECT_TRUE(RankExpr::equal(C->ops()[0].When, Pred));
  EXPECT_EQ(printProgram(*C), printProgram(P));
}

// The hostile-input bound: a predicate of 200k terms is copied with an
// explicit stack. (Printing and evaluating such a chain recurse, so the
// comparison walks it here by hand.)
TEST(Clone, CopiesADeepExpressionWithoutRecursion) {
  Program P("deep", 2);
  const RankExpr *E = P.makeExpr(RankExpr::Rank, {});
  constexpr int Terms = 200000;
  for (int I = 0; I != Terms; ++I)
    E = P.makeExpr(RankExpr::Add, {}, 0, E, P.makeConst(I));
  Op O;
  O.Kind = OpKind::Compute;
  O.Callee = P.save("c");
  O.When = E;
  P.addOp(O);
  std::unique_ptr<Program> C = P.clone();
  const RankExpr *A = P.ops()[0].When, *B = C->ops()[0].When;
  int Depth = 0;
  for (; A->kind() == RankExpr::Add; A = A->lhs(), B = B->lhs(), ++Depth) {
    ASSERT_NE(A, B);
    ASSERT_EQ(B->kind(), RankExpr::Add);
    ASSERT_EQ(B->rhs()->value(), A->rhs()->value());
    ASSERT_TRUE(B->dependsOnRank());
  }
  EXPECT_EQ(Depth, Terms);
  EXPECT_EQ(B->kind(), RankExpr::Rank);
}
