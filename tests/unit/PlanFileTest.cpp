// The plan file: round trip, and refusals of corrupt, truncated and
// wrong-version plans with the line and what was expected.
#include "TestUtil.h"

using namespace collc;
using namespace collc::test;

namespace {
const char *Small = R"(program @small world(4) {
  group @dp = world
  group @tp = split(rank / 2, rank)
  %a, %b = compute @bwd cost(10us) : f32[64], bf16[32]
  %ra = all_reduce avg %a in @dp
  %rb = all_reduce avg %b in @dp
  %g = all_gather %a in @tp
  send %a to (rank + 1) when rank < 3
  %v = recv from (rank - 1) : f32[64] when rank > 0
  %w = broadcast %a root 1 in @tp
  compute @opt(%ra, %rb, %g, %w)
}
)";

std::string errorOf(llvm::StringRef Text) {
  llvm::Expected<plan::Plan> P = plan::readPlan(Text, "t.plan");
  if (P)
    return "";
  return llvm::toString(P.takeError());
}
} // namespace

TEST(PlanFile, WritesAndReadsBackIdentically) {
  plan::Plan P = compileOK(Small);
  std::string Text = plan::writePlan(P);
  llvm::Expected<plan::Plan> Back = plan::readPlan(Text, "t.plan");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(plan::writePlan(*Back), Text);
  EXPECT_EQ(Back->Digest, plan::computeDigest(P));
  EXPECT_EQ(Back->World, 4);
  ASSERT_EQ(Back->Groups.size(), 2u);
  EXPECT_EQ(Back->Groups[1].LocalRank[3], 1);
  // The send's peer is per rank: rank 3 does not send.
  bool SawSend = false;
  for (const plan::Comm &C : Back->Comms)
    if (C.Kind == plan::CommKind::Send) {
      SawSend = true;
      EXPECT_EQ(C.Peers, (std::vector<int32_t>{1, 2, 3, -1}));
      EXPECT_EQ(C.Ranks.str(), "0-2");
    }
  EXPECT_TRUE(SawSend);
}

TEST(PlanFile, ExplanationsAreOutsideTheDigest) {
  plan::Plan P = compileOK(Small);
  std::string Before = plan::computeDigest(P);
  P.Notes.push_back("compiled on a Tuesday");
  for (plan::Comm &C : P.Comms)
    C.Why.push_back("because");
  P.Source = "elsewhere.coll";
  EXPECT_EQ(plan::computeDigest(P), Before);
  P.Comms.front().Async = !P.Comms.front().Async;
  EXPECT_NE(plan::computeDigest(P), Before);
}

TEST(PlanFile, RefusesAWrongVersion) {
  std::string E = errorOf("collc-plan 7\nprogram @p world 1 align 256\n");
  EXPECT_NE(E.find("t.plan:1: plan format version 7 is not supported; this collc reads versions 1 to 2"),
            std::string::npos)
      << E;
  EXPECT_NE(errorOf("hello\n").find("not a collc plan"), std::string::npos);
  EXPECT_NE(errorOf("").find("empty plan"), std::string::npos);
}

TEST(PlanFile, RefusesATruncatedPlan) {
  std::string Text = plan::writePlan(compileOK(Small));
  // Cut at every line boundary: never accepted, always a clear error.
  for (size_t Cut = Text.find('\n'); Cut != std::string::npos && Cut + 1 < Text.size();
       Cut = Text.find('\n', Cut + 1)) {
    std::string E = errorOf(llvm::StringRef(Text).take_front(Cut + 1));
    ASSERT_FALSE(E.empty()) << "accepted a plan cut after byte " << Cut;
    EXPECT_TRUE(E.find("truncated") != std::string::npos || E.find("t.plan:") != std::string::npos)
        << E;
  }
  std::string E = errorOf(llvm::StringRef(Text).drop_back(4)); // no "end"
  EXPECT_NE(E.find("truncated: expected 'end' after the digest"), std::string::npos) << E;
}

TEST(PlanFile, RefusesACorruptPlan) {
  std::string Text = plan::writePlan(compileOK(Small));
  // A changed size: still well formed, but the digest catches it.
  size_t At = Text.find("f32[64]");
  ASSERT_NE(At, std::string::npos);
  std::string Changed = Text;
  Changed.replace(At, 7, "f32[65]");
  std::string E = errorOf(Changed);
  EXPECT_NE(E.find("digest mismatch"), std::string::npos) << E;
  // A dangling reference names the line and the range.
  std::string Dangling = Text;
  size_t In = Dangling.find(" in [");
  Dangling.replace(In, 5, " in [999,");
  E = errorOf(Dangling);
  EXPECT_NE(E.find("is not in 0.."), std::string::npos) << E;
  // Garbage.
  std::string Garbage = Text;
  Garbage.insert(Garbage.find("step "), "flux capacitor\n");
  E = errorOf(Garbage);
  EXPECT_NE(E.find("unknown line 'flux'"), std::string::npos) << E;
}

TEST(PlanFile, RankSets) {
  llvm::Expected<plan::RankSet> S = plan::RankSet::parse("0-3,6", 8);
  ASSERT_TRUE(bool(S));
  EXPECT_EQ(S->str(), "0-3,6");
  EXPECT_TRUE(S->contains(2));
  EXPECT_FALSE(S->contains(5));
  llvm::Expected<plan::RankSet> Bad = plan::RankSet::parse("3-1", 8);
  ASSERT_FALSE(bool(Bad));
  llvm::consumeError(Bad.takeError());
  llvm::Expected<plan::RankSet> Out = plan::RankSet::parse("9", 8);
  ASSERT_FALSE(bool(Out));
  llvm::consumeError(Out.takeError());
}

// A compiled plan carries its digest from the lowering on, and writing then
// reading it gives back an equal plan: every example, every field.
TEST(PlanFile, CompiledPlanEqualsItsReadBackOnEveryExample) {
  for (const std::string &Path : exampleFiles()) {
    plan::Plan P = compileOK(readOK(Path), "", Path);
    ASSERT_FALSE(P.Digest.empty()) << Path;
    EXPECT_EQ(P.Digest, plan::computeDigest(P)) << Path;
    llvm::Expected<plan::Plan> Back = plan::readPlan(plan::writePlan(P), Path);
    ASSERT_TRUE(bool(Back)) << Path << ": " << llvm::toString(Back.takeError());
    EXPECT_TRUE(*Back == P) << Path << ": the plan read back differs from the one written";
  }
}

// Explanations are free text: a tab, a quote, a backslash, a newline, other
// control bytes and non-ASCII bytes all come back exactly (the reader once
// turned `\t` into `t`).
TEST(PlanFile, QuotedTextRoundTripsExactly) {
  plan::Plan P = compileOK(Small);
  const std::string Odd = std::string("a\tb \"q\" back\\slash\nline two \x01\x7f caf\xc3\xa9 \xff");
  P.Source = "dir with space/" + Odd + ".coll";
  P.Notes.push_back(Odd);
  P.Comms.front().Why.push_back(Odd);
  std::string Text = plan::writePlan(P);
  EXPECT_NE(Text.find(R"(a\tb \"q\" back\\slash\nline two \x01\x7f caf)"), std::string::npos)
      << Text;
  llvm::Expected<plan::Plan> Back = plan::readPlan(Text, "t.plan");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(Back->Source, P.Source);
  ASSERT_FALSE(Back->Notes.empty());
  EXPECT_EQ(Back->Notes.back(), Odd);
  ASSERT_FALSE(Back->Comms.front().Why.empty());
  EXPECT_EQ(Back->Comms.front().Why.back(), Odd);
  EXPECT_TRUE(*Back == P);
  EXPECT_EQ(plan::writePlan(*Back), Text);
}

TEST(PlanFile, NamesABadEscapeWithItsLineAndColumn) {
  std::string Text = plan::writePlan(compileOK(Small));
  size_t At = Text.find("note \"");
  ASSERT_NE(At, std::string::npos) << Text;
  size_t Line = 1 + std::count(Text.begin(), Text.begin() + At, '\n');
  Text.insert(At + 6, "ok\\tthen\\q");
  std::string E = errorOf(Text);
  EXPECT_NE(E.find("t.plan:" + std::to_string(Line) +
                   ":15: unknown escape '\\q'; expected \\n, \\t, \\r, \\\", \\\\ or \\xHH"),
            std::string::npos)
      << E;
}

// A joint comm (issue 35) and steps that name their ranks: written as
// version 2, read back equal, a broadcast's one root held on every side;
// a version-1 file cannot say either.
TEST(PlanFile, JointCommsRoundTripAsVersion2) {
  plan::Plan P = compileOK(JointProgram, "verify,check-cross-rank", "j.coll");
  EXPECT_EQ(P.Version, 2);
  std::string Text = plan::writePlan(P);
  EXPECT_NE(Text.find("collc-plan 2\n"), std::string::npos) << Text;
  EXPECT_NE(Text.find("\n  side ranks 1-3 in [1] out [3] inbuf -1 outbuf -1\n"), std::string::npos)
      << Text;
  EXPECT_NE(Text.find("\nstep launch 0 ranks 1-3\n"), std::string::npos) << Text;
  llvm::Expected<plan::Plan> Back = plan::readPlan(Text, "j.plan");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_TRUE(*Back == P);
  EXPECT_EQ(Back->Comms[0].Peers, (std::vector<int32_t>{2, 2, 2, 2}));
  // Without those, a plan is version 1 as before.
  EXPECT_EQ(compileOK(Small).Version, 1);
  // A version-1 file with a side or a step's ranks is refused at the line.
  std::string Old = Text;
  Old.replace(Old.find("collc-plan 2"), 12, "collc-plan 1");
  std::string E = errorOf(Old);
  EXPECT_NE(E.find("a joint comm's 'side' line needs plan format version 2; this file is "
                   "version 1"),
            std::string::npos)
      << E;
}
