// The verifier's rules one by one through the C++ API. The golden tests in
// tests/lit/verify/ cover each rule's rendered diagnostic as well.
#include "TestUtil.h"

using namespace collc;
using namespace collc::test;

static std::string withBody(llvm::StringRef Body, int World = 8) {
  return ("program @p world(" + llvm::Twine(World) +
          ") {\n  group @dp = world\n  group @tp = "
          "split(rank / 2, rank)\n" +
          Body + "}\n")
      .str();
}

TEST(Verifier, AcceptsAWellFormedProgram) {
  EXPECT_EQ(diagnose(withBody(R"(  %x = compute @a : f32[8]
  %y = all_reduce sum %x in @dp
  send %y to (rank + 1) when rank < 7
  %z = recv from (rank - 1) : f32[8] when rank > 0
)")),
            "");
}

TEST(Verifier, PeerOutOfRangeNamesTheRank) {
  std::string D = diagnose(withBody("  %x = compute @a : f32[8]\n  send %x to (rank + 1)\n"));
  EXPECT_NE(D.find("peer 8 is not in 0..7 on rank 7"), std::string::npos) << D;
}

TEST(Verifier, SendToSelf) {
  std::string D = diagnose(withBody("  %x = compute @a : f32[8]\n  send %x to 3 when rank < 5\n"));
  EXPECT_NE(D.find("rank 3 sends to itself"), std::string::npos) << D;
}

TEST(Verifier, GroupLocalPeers) {
  // In @tp every subgroup has two ranks: peer 1 - local rank is the other.
  EXPECT_EQ(diagnose(withBody("  %x = compute @a : f32[8]\n  send %x to (1 - rank % 2) in @tp\n"
                              "  %y = recv from (1 - rank % 2) in @tp : f32[8]\n")),
            "");
  std::string D = diagnose(withBody("  %x = compute @a : f32[8]\n  send %x to 2 in @tp\n"));
  EXPECT_NE(D.find("peer 2 is not in 0..1 on rank 0 (@tp has 2 ranks there)"), std::string::npos)
      << D;
}

TEST(Verifier, RootOutOfRange) {
  std::string D =
      diagnose(withBody("  %x = compute @a : f32[8]\n  %b = broadcast %x root 2 in @tp\n"));
  EXPECT_NE(D.find("root 2 is not in 0..1 on rank 0"), std::string::npos) << D;
}

TEST(Verifier, UseWhereNotDefined) {
  std::string D = diagnose(withBody(R"(  %x = compute @a : f32[8] when rank < 4
  %y = all_reduce sum %x in @dp
)"));
  EXPECT_NE(D.find("%x is used on rank 4, where it is not defined"), std::string::npos) << D;
  EXPECT_NE(D.find("note: %x is defined here"), std::string::npos) << D;
}

TEST(Verifier, ResultTypeMismatch) {
  std::string D =
      diagnose(withBody("  %x = compute @a : f32[8]\n  %y = all_gather %x in @tp : f32[8]\n"));
  EXPECT_NE(D.find("result %y of all_gather has type f32[8], but all_gather of %x : f32[8] in @tp "
                   "gives f32[16]"),
            std::string::npos)
      << D;
}

TEST(Verifier, AllToAllVSizes) {
  std::string Body = R"(  group @pair = ranks [0, 1]
  %x = compute @a : f32[4, 2]
  %y = all_to_all_v %x in @pair splits [[3, 2], [0, 1]] : f32[2, 2]
)";
  std::string D = diagnose(withBody(Body));
  EXPECT_NE(D.find("rank 0 of @pair sends 5 rows in all, more than the 4 rows of %x"),
            std::string::npos)
      << D;
  EXPECT_NE(D.find("rank 0 of @pair receives 3 rows in all, more than the capacity 2 of %y"),
            std::string::npos)
      << D;
}

TEST(Verifier, AsyncMustBeWaitedOnceBeforeUse) {
  std::string D = diagnose(withBody(R"(  %x = compute @a : f32[8]
  %y = all_reduce async sum %x in @dp
  compute @use(%y)
  wait %y
  wait %y
  %z = all_reduce async sum %x in @dp
)"));
  EXPECT_NE(D.find("%y is used before its `wait`"), std::string::npos) << D;
  EXPECT_NE(D.find("%y is waited for twice"), std::string::npos) << D;
  EXPECT_NE(D.find("%z is the result of an async all_reduce that is never waited for"),
            std::string::npos)
      << D;
}

TEST(Verifier, PredicateThatCannotBeEvaluated) {
  std::string D = diagnose(withBody("  %x = compute @a : f32[8] when 8 / rank > 1\n"));
  EXPECT_NE(D.find("`when` predicate of compute cannot be evaluated on rank 0: division by zero"),
            std::string::npos)
      << D;
}

TEST(Verifier, ProgrammaticUseBeforeDefinition) {
  Program P("p", 2);
  llvm::Expected<ValueId> X = P.addValue("x", TensorType(ElemType::F32, {2}));
  ASSERT_TRUE(bool(X));
  Op Use;
  Use.Kind = OpKind::Compute;
  Use.Callee = P.save("use");
  Use.Operands.push_back(*X);
  P.addOp(Use);
  Op Def;
  Def.Kind = OpKind::Compute;
  Def.Callee = P.save("def");
  Def.Results.push_back(*X);
  P.addOp(Def);
  DiagnosticEngine Diags;
  llvm::Error E = verifyProgram(P, Diags);
  ASSERT_TRUE(bool(E));
  std::string S = llvm::toString(std::move(E));
  EXPECT_NE(S.find("%x is used before it is defined"), std::string::npos) << S;
}

TEST(Verifier, ExamplesVerify) {
  for (const std::string &Path : exampleFiles()) {
    ParsedProgram P = parseOK(readOK(Path), Path);
    ASSERT_NE(P.Prog, nullptr) << Path;
    DiagnosticEngine Diags(P.Source.get());
    llvm::Error E = verifyProgram(*P.Prog, Diags);
    EXPECT_FALSE(bool(E)) << Path << ": " << llvm::toString(std::move(E));
  }
}
