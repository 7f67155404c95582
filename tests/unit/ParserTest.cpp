#include "TestUtil.h"

using namespace collc;
using namespace collc::test;

TEST(Parser, BuildsGroupsValuesAndOps) {
  std::string D = diagnose(R"(program @p world(8) {
  %g = compute @bwd(%g0) : f32[768]
}
)");
  EXPECT_NE(D.find("test.coll:2:21: error: use of undefined value %g0"), std::string::npos) << D;

  ParsedProgram Q = parseOK(R"(program @p world(8) {
  group @dp = world
  group @tp = split(rank / 2, rank)
  group @pair = ranks [3, 1]
  %g = compute @bwd cost(12us) stream(2) : f32[768]
  %r = all_reduce sum %g in @dp
}
)");
  ASSERT_NE(Q.Prog, nullptr);
  const Program &P = *Q.Prog;
  EXPECT_EQ(P.name(), "p");
  EXPECT_EQ(P.worldSize(), 8);
  ASSERT_EQ(P.groups().size(), 3u);
  const Group &Tp = P.group(P.lookupGroup("tp"));
  EXPECT_EQ(Tp.numSubgroups(), 4u);
  EXPECT_EQ(Tp.localRank(5), 1);
  EXPECT_EQ(Tp.membersOf(5), (llvm::ArrayRef<int32_t>{4, 5}));
  const Group &Pair = P.group(P.lookupGroup("pair"));
  EXPECT_EQ(Pair.localRank(3), 0);
  EXPECT_EQ(Pair.localRank(1), 1);
  EXPECT_FALSE(Pair.isMember(0));
  ASSERT_EQ(P.ops().size(), 2u);
  const Op &C = P.ops()[0];
  EXPECT_EQ(C.Kind, OpKind::Compute);
  EXPECT_EQ(C.CostNs, 12000);
  EXPECT_EQ(C.Stream, 2u);
  EXPECT_EQ(C.Callee, "bwd");
  const Op &AR = P.ops()[1];
  EXPECT_EQ(AR.Kind, OpKind::AllReduce);
  EXPECT_EQ(P.value(AR.Results[0]).Type.str(), "f32[768]");
  EXPECT_EQ(P.value(AR.Operands[0]).Name, "g");
}

TEST(Parser, SplitOrdersMembersByKeyThenRank) {
  ParsedProgram Q = parseOK(R"(program @p world(6) {
  group @rev = split(rank % 2, 0 - rank)
})");
  ASSERT_NE(Q.Prog, nullptr);
  const Group &G = Q.Prog->group(0);
  ASSERT_EQ(G.numSubgroups(), 2u);
  EXPECT_EQ(G.subgroups()[0], (std::vector<int32_t>{4, 2, 0}));
  EXPECT_EQ(G.subgroups()[1], (std::vector<int32_t>{5, 3, 1}));
}

TEST(Parser, NegativeColorLeavesRankOutOfEveryGroup) {
  ParsedProgram Q = parseOK(R"(program @p world(4) {
  group @g = split((rank < 2) - 1, rank)
})");
  ASSERT_NE(Q.Prog, nullptr);
  const Group &G = Q.Prog->group(0);
  EXPECT_FALSE(G.isMember(2));
  EXPECT_TRUE(G.isMember(0));
  EXPECT_EQ(G.numSubgroups(), 1u);
}

TEST(Parser, InfersResultTypesFromTheGroup) {
  ParsedProgram Q = parseOK(R"(program @p world(4) {
  group @dp = world
  %x = compute @a : bf16[8, 16]
  %g = all_gather %x in @dp
  %s = reduce_scatter max %x in @dp
  %t = all_to_all %x in @dp
  %b = broadcast %x root 3 in @dp
  %c = compute @b : f32[]
  %cg = all_gather %c in @dp
})");
  ASSERT_NE(Q.Prog, nullptr);
  auto TypeOf = [&](llvm::StringRef N) { return Q.Prog->value(Q.Prog->lookupValue(N)).Type.str(); };
  EXPECT_EQ(TypeOf("g"), "bf16[32, 16]");
  EXPECT_EQ(TypeOf("s"), "bf16[2, 16]");
  EXPECT_EQ(TypeOf("t"), "bf16[8, 16]");
  EXPECT_EQ(TypeOf("b"), "bf16[8, 16]");
  EXPECT_EQ(TypeOf("cg"), "f32[4]");
}

TEST(Parser, ReportsSeveralErrorsAndKeepsGoing) {
  std::string D = diagnose(R"(program @p world(8) {
  group @dp = world
  %a = compute @x : f33[4]
  %b = compute @y : f32[6]
  %c = all_reduce sum %a in @dp
  %d = all_reduce sum %b in @nope
  %e = bogus %b
}
)");
  EXPECT_NE(D.find("test.coll:3:21: error: unknown element type 'f33'"), std::string::npos) << D;
  // %a failed to parse, so its use on line 5 is not reported again.
  EXPECT_EQ(D.find(":5:"), std::string::npos) << D;
  EXPECT_NE(D.find("test.coll:6:29: error: use of undefined group @nope"), std::string::npos) << D;
  EXPECT_NE(D.find("test.coll:7:8: error: unknown op 'bogus'"), std::string::npos) << D;
  EXPECT_NE(D.find("reading the program failed with 3 errors"), std::string::npos) << D;
}

TEST(Parser, RendersCaretUnderTheError) {
  std::string D = diagnose("program @p world(0) {\n}\n");
  EXPECT_NE(D.find("test.coll:1:18: error: world size 0 is not in 1..1048576\n"
                   "program @p world(0) {\n"
                   "                 ^"),
            std::string::npos)
      << D;
}

TEST(Parser, ParsesLargeIntegersAndRejectsOverflow) {
  EXPECT_NE(
      diagnose("program @p world(99999999999999999999) {\n}\n").find("does not fit in 64 bits"),
      std::string::npos);
}

TEST(Parser, DurationsBecomeNanoseconds) {
  ParsedProgram Q = parseOK(R"(program @p world(1) {
  compute @a cost(1.5us)
  compute @b cost(2ms)
  compute @c cost(7ns)
})");
  ASSERT_NE(Q.Prog, nullptr);
  EXPECT_EQ(Q.Prog->ops()[0].CostNs, 1500);
  EXPECT_EQ(Q.Prog->ops()[1].CostNs, 2000000);
  EXPECT_EQ(Q.Prog->ops()[2].CostNs, 7);
  EXPECT_NE(diagnose("program @p world(1) {\n  compute @a cost(0.5ns)\n}\n").find("whole number"),
            std::string::npos);
}

TEST(Parser, AttributesAndStrings) {
  ParsedProgram Q = parseOK(R"(program @p world(2) {
  group @dp = world
  %x = compute @a : f32[4]
  %y = all_reduce sum %x in @dp {bucket = 3, why = "closed at \"cap\"\n", delta = -2}
})");
  ASSERT_NE(Q.Prog, nullptr);
  const Op &O = Q.Prog->ops()[1];
  ASSERT_NE(O.getAttr("bucket"), nullptr);
  EXPECT_EQ(O.getAttr("bucket")->Int, 3);
  EXPECT_EQ(O.getAttr("why")->Str, "closed at \"cap\"\n");
  EXPECT_EQ(O.getAttr("delta")->Int, -2);
}
