// Groups build their world-sized tables lazily (issue 10, memory): a group
// that no op uses keeps only its definition, the world group answers from
// the rank itself, and a built table is shared with the program's clones.

#include "TestUtil.h"

#include "ir/RankRange.h"
#include "ir/Verifier.h"

using namespace collc;
using namespace collc::test;

TEST(GroupTables, BuiltOnlyWhenAReaderNeedsThem) {
  ParsedProgram Q = parseOK(R"(program @p world(8) {
  group @dp = world
  group @tp = split(rank / 2, rank)
  group @pair = ranks [3, 1]
  group @unused = split(rank % 4, 0 - rank)
  %g = compute @bwd cost(12us) : f32[8]
  %r = all_gather %g in @tp
}
)");
  ASSERT_NE(Q.Prog, nullptr);
  const Program &P = *Q.Prog;
  // The parser infers the all_gather's type from @tp's subgroup size; no
  // other group has been asked anything.
  for (const Group &G : P.groups())
    EXPECT_EQ(G.hasTables(), G.Name == "tp") << G.Name.str();

  // The world answers per-rank questions without tables.
  const Group &Dp = P.group(P.lookupGroup("dp"));
  EXPECT_EQ(Dp.subgroupOf(5), 0);
  EXPECT_EQ(Dp.localRank(5), 5);
  EXPECT_EQ(Dp.sizeOn(5), 8);
  EXPECT_EQ(Dp.uniformSize(), 8);
  EXPECT_TRUE(Dp.coversWorld());
  EXPECT_FALSE(Dp.hasTables());
  // So does a rank list, for what its list says.
  const Group &Pair = P.group(P.lookupGroup("pair"));
  EXPECT_EQ(Pair.uniformSize(), 2);
  EXPECT_FALSE(Pair.coversWorld());
  EXPECT_FALSE(Pair.hasTables());

  // Verifying on every rank reads the group the all_gather uses only.
  DiagnosticEngine Diags(Q.Source.get());
  llvm::Error E = verifyProgram(P, Diags);
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  EXPECT_FALSE(Pair.hasTables());
  EXPECT_FALSE(P.group(P.lookupGroup("unused")).hasTables());
  EXPECT_FALSE(Dp.hasTables());

  // Built on demand, the tables are the ones the definition says.
  const Group &Unused = P.group(P.lookupGroup("unused"));
  EXPECT_EQ(Unused.membersOf(6), (llvm::ArrayRef<int32_t>{6, 2}));
  EXPECT_EQ(Unused.localRank(2), 1);
  EXPECT_TRUE(Unused.hasTables());
  EXPECT_EQ(Pair.membersOf(1), (llvm::ArrayRef<int32_t>{3, 1}));
  EXPECT_FALSE(Pair.isMember(0));
  EXPECT_EQ(Dp.membersOf(0).size(), 8u);
}

TEST(GroupTables, ClonesShareTheTablesBuiltOnce) {
  ParsedProgram Q = parseOK(R"(program @p world(4) {
  group @odd = split(rank % 2 - 1, 0 - rank)
}
)");
  ASSERT_NE(Q.Prog, nullptr);
  std::unique_ptr<Program> C = Q.Prog->clone();
  const Group &Copy = C->group(0);
  EXPECT_FALSE(Copy.hasTables());
  EXPECT_EQ(Copy.subgroups(), (llvm::ArrayRef<std::vector<int32_t>>{{3, 1}}));
  // The original sees the tables its clone built, at the same address.
  EXPECT_TRUE(Q.Prog->group(0).hasTables());
  EXPECT_EQ(Q.Prog->group(0).subgroups().data(), Copy.subgroups().data());
}

TEST(GroupTables, BudgetCountsTheGroupsThatNeedTables) {
  std::string Text = "program @p world(1048576) {\n";
  for (int I = 0; I != 100; ++I)
    Text += "  group @g" + std::to_string(I) + " = world\n";
  Text += "  %x = compute @f : f32[4]\n  %y = all_reduce sum %x in @g0\n}\n";
  ParsedProgram Q = parseOK(Text);
  ASSERT_NE(Q.Prog, nullptr);
  // One group in use: 12 MiB, within the budget.
  EXPECT_FALSE(checkGroupTableBudget(*Q.Prog, GroupsNeeded::UsedByOps));
  // Lowering lists all 100: 1200 MiB, refused at the 86th.
  std::optional<GroupBudgetExcess> X = checkGroupTableBudget(*Q.Prog, GroupsNeeded::All);
  ASSERT_TRUE(X);
  EXPECT_EQ(X->Loc.getPointer(), Q.Prog->group(85).Loc.getPointer());
  EXPECT_NE(X->Msg.find("the 100 groups of the program (a plan lists them all) need 12582912 "
                        "bytes each at world 1048576, 1258291200 bytes (1200 MiB) in all, more "
                        "than the limit of 1073741824 bytes (1024 MiB)"),
            std::string::npos)
      << X->Msg;
}

TEST(RankRange, ProvesWhatCannotFailAndNothingElse) {
  auto Range = [](const char *Expr, int64_t World) -> std::optional<RankRange> {
    ParsedProgram Q = parseOK(std::string("program @p world(") + std::to_string(World) +
                              ") {\n  group @g = split(" + Expr + ", rank)\n}\n");
    EXPECT_NE(Q.Prog, nullptr) << Expr;
    if (!Q.Prog)
      return std::nullopt;
    return rangeOverRanks(*Q.Prog->group(0).Color, World);
  };
  auto Is = [](std::optional<RankRange> R, int64_t Lo, int64_t Hi) {
    return R && R->Lo == Lo && R->Hi == Hi;
  };
  EXPECT_TRUE(Is(Range("rank % 8", 16), 0, 7));
  EXPECT_TRUE(Is(Range("rank / 2", 8), 0, 3));
  EXPECT_TRUE(Is(Range("(rank - 3) / 2", 8), -2, 2));
  EXPECT_TRUE(Is(Range("world - 1 - rank", 8), 0, 7));
  EXPECT_TRUE(Is(Range("(rank < 2) - 1", 4), -1, 0));
  EXPECT_TRUE(Is(Range("min(rank, 3) * -2", 8), -6, 0));
  // Conservative: these never fail on a rank (so they parse), but the
  // intervals cannot tell, and the caller evaluates on every rank instead
  // (intervals make rank + 1 - rank range over -6..8; && skips its right
  // side where its left is 0).
  EXPECT_FALSE(Range("8 / (rank + 1 - rank)", 8));
  EXPECT_FALSE(Range("(rank > 0) && 8 / rank > 2", 8));
  EXPECT_FALSE(Range("rank < 2 && rank * 4611686018427387904 > 0", 8));
}
