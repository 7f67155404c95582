#include "TestUtil.h"

using namespace collc;
using namespace collc::test;

static const char *Canonical = R"(program @every_op world(4) {
  group @dp = world
  group @tp = split(rank / 2, rank)
  group @pair = ranks [0, 1]
  %g = compute @bwd cost(12us) stream(1) : f32[8, 4]
  %c = compute @route : i64[4]
  %r = all_reduce async premul_sum(0.125) %g in @dp : f32[8, 4] {bucket = 0, why = "a \"b\""}
  wait %r
  %a, %b = all_reduce min %g, %r in @tp : f32[8, 4], f32[8, 4]
  %ag = all_gather %g in @tp : f32[16, 4]
  %rs = reduce_scatter avg %g in @dp : f32[2, 4]
  %bc = broadcast %g root (1 - rank % 2) in @tp : f32[8, 4]
  %aa = all_to_all %g in @dp : f32[8, 4]
  %v = all_to_all_v %g in @dp splits %c : f32[16, 4]
  %w = all_to_all_v %g in @pair splits [[1, 2], [3, 4]] : f32[8, 4]
  send %g to (rank + 1) when rank < 3
  %x = recv from (rank - 1) : f32[8, 4] when rank > 0
  send %g to 1 in @pair when rank == 0
  barrier in @dp
  compute @opt(%a, %b, %ag) cost(3ms)
}
)";

TEST(Printer, CanonicalTextPrintsBackUnchanged) {
  ParsedProgram P = parseOK(Canonical);
  ASSERT_NE(P.Prog, nullptr);
  EXPECT_EQ(printProgram(*P.Prog), Canonical);
}

TEST(Printer, RoundTripIsAFixedPoint) {
  // Non-canonical spacing, omitted types, redundant parentheses.
  ParsedProgram P = parseOK(R"(program   @p world( 4 ){
  group @dp=world
  %g=compute @bwd() cost(1000us) : f32[8,4]
  %r = all_reduce sum %g in @dp
  send %g to ((rank) + 1) when (rank < 3) && !(rank == 7)
  %x = recv from rank - 1 : f32[8, 4] when rank > 0
})");
  ASSERT_NE(P.Prog, nullptr);
  std::string First = printProgram(*P.Prog);
  EXPECT_NE(First.find("cost(1ms)"), std::string::npos) << First;
  EXPECT_NE(First.find("send %g to (rank + 1) when rank < 3 && !(rank == 7)"), std::string::npos)
      << First;
  ParsedProgram Again = parseOK(First);
  ASSERT_NE(Again.Prog, nullptr);
  EXPECT_EQ(printProgram(*Again.Prog), First);
}

TEST(Printer, ProgrammaticProgramPrintsAndParses) {
  Program P("built", 2);
  Group G;
  G.Name = "dp";
  ASSERT_TRUE(bool(P.addGroup(G)));
  llvm::Expected<ValueId> X = P.addValue("x", TensorType(ElemType::F16, {4}));
  llvm::Expected<ValueId> Y = P.addValue("y", TensorType(ElemType::F16, {4}));
  ASSERT_TRUE(X && Y);
  Op C;
  C.Kind = OpKind::Compute;
  C.Callee = P.save("make");
  C.Results.push_back(*X);
  P.addOp(C);
  Op A;
  A.Kind = OpKind::AllReduce;
  A.Group = 0;
  A.Operands.push_back(*X);
  A.Results.push_back(*Y);
  A.When = P.makeExpr(RankExpr::Ne, {}, 0, P.makeExpr(RankExpr::Rank, {}), P.makeConst(-1));
  P.addOp(A);
  std::string Text = printProgram(P);
  EXPECT_NE(Text.find("when rank != -1"), std::string::npos) << Text;
  ParsedProgram Back = parseOK(Text);
  ASSERT_NE(Back.Prog, nullptr);
  EXPECT_EQ(printProgram(*Back.Prog), Text);
}

TEST(Printer, DurationsUseTheLargestExactUnit) {
  auto Str = [](int64_t Ns) {
    std::string S;
    llvm::raw_string_ostream OS(S);
    printDuration(Ns, OS);
    return S;
  };
  EXPECT_EQ(Str(0), "0ns");
  EXPECT_EQ(Str(1500), "1500ns");
  EXPECT_EQ(Str(12000), "12us");
  EXPECT_EQ(Str(3000000), "3ms");
  EXPECT_EQ(Str(2000000000), "2s");
}
