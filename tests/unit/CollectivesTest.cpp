// The op vocabulary table (ir/Collectives.def): every spelling round-trips
// through the IR's and the plan's name lookups, the two enums map onto each
// other, the predicates say what the table says, and the parser accepts
// every keyword in a tiny program whose compiled plan spells it back. The
// fuzzer's dictionary is data, not code, so it is checked rather than
// generated.
#include "TestUtil.h"

#include "plan/analysis/CommKind.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace collc;
using namespace collc::test;

namespace {
/// One row of the table as the test sees it, read from the .def directly so
/// that the generated code is checked against the table, not against itself.
struct Row {
  OpKind Kind;
  const char *Spelling;
  bool Comm, Collective, Reduce, Root, Splits, Results;
};

const Row Rows[] = {
#define COLLC_LOCAL_OP(Enum, Spelling, Reduce, Root, Splits, Results)                             \
  {OpKind::Enum, Spelling, false, false, Reduce, Root, Splits, Results},
#define COLLC_COLLECTIVE(Enum, Spelling, Reduce, Root, Splits, Results)                           \
  {OpKind::Enum, Spelling, true, true, Reduce, Root, Splits, Results},
#define COLLC_POINT_TO_POINT(Enum, Spelling, Reduce, Root, Splits, Results)                       \
  {OpKind::Enum, Spelling, true, false, Reduce, Root, Splits, Results},
#include "ir/Collectives.def"
};

/// A line using \p K, after `%a = compute @f : f32[8]` in a world of 2 with
/// `group @w = world`. A new kind makes this switch incomplete (-Wswitch).
const char *useOf(OpKind K) {
  switch (K) {
  case OpKind::Compute:
    return "%r = compute @g(%a) : f32[8]";
  case OpKind::AllReduce:
    return "%r = all_reduce sum %a in @w";
  case OpKind::AllGather:
    return "%r = all_gather %a in @w";
  case OpKind::ReduceScatter:
    return "%r = reduce_scatter max %a in @w";
  case OpKind::Broadcast:
    return "%r = broadcast %a root 1 in @w";
  case OpKind::AllToAll:
    return "%r = all_to_all %a in @w";
  case OpKind::AllToAllV:
    return "%r = all_to_all_v %a in @w splits [[2, 6], [6, 2]] : f32[8]";
  case OpKind::Send:
  case OpKind::Recv:
    return "send %a to 1 when rank == 0\n  %r = recv from 0 : f32[8] when rank == 1";
  case OpKind::Barrier:
    return "barrier in @w";
  case OpKind::Wait:
    return "%r = all_reduce async sum %a in @w\n  wait %r";
  }
  return "";
}
} // namespace

TEST(Collectives, TableHasEveryKindInEnumOrder) {
  ASSERT_EQ(std::size(Rows), NumOpKinds);
  for (unsigned I = 0; I != NumOpKinds; ++I)
    EXPECT_EQ(unsigned(Rows[I].Kind), I) << Rows[I].Spelling;
}

TEST(Collectives, IRSpellingsRoundTrip) {
  for (const Row &R : Rows) {
    EXPECT_EQ(opKindName(R.Kind), R.Spelling);
    EXPECT_EQ(parseOpKind(R.Spelling), R.Kind) << R.Spelling;
    EXPECT_EQ(isCommunication(R.Kind), R.Comm) << R.Spelling;
    EXPECT_EQ(isCollective(R.Kind), R.Collective) << R.Spelling;
    EXPECT_EQ(hasReduceOp(R.Kind), R.Reduce) << R.Spelling;
    EXPECT_EQ(hasRoot(R.Kind), R.Root) << R.Spelling;
    EXPECT_EQ(takesSplits(R.Kind), R.Splits) << R.Spelling;
    EXPECT_EQ(hasResults(R.Kind), R.Results) << R.Spelling;
  }
  EXPECT_EQ(parseOpKind("all_reduse"), llvm::None);
  EXPECT_EQ(parseOpKind("All_Reduce"), llvm::None);
  EXPECT_EQ(parseOpKind(""), llvm::None);
}

TEST(Collectives, PlanSpellingsRoundTrip) {
  unsigned NumComms = 0;
  for (const Row &R : Rows) {
    llvm::Optional<plan::CommKind> C = commKindOf(R.Kind);
    EXPECT_EQ(C.hasValue(), R.Comm) << R.Spelling;
    if (!C) {
      EXPECT_EQ(plan::parseCommKind(R.Spelling), llvm::None) << R.Spelling;
      continue;
    }
    ++NumComms;
    EXPECT_EQ(opKindOf(*C), R.Kind) << R.Spelling;
    EXPECT_EQ(plan::commKindName(*C), R.Spelling);
    EXPECT_EQ(plan::parseCommKind(R.Spelling), C) << R.Spelling;
    EXPECT_EQ(plan::isCollective(*C), R.Collective) << R.Spelling;
    EXPECT_EQ(plan::hasReduceOp(*C), R.Reduce) << R.Spelling;
    EXPECT_EQ(plan::hasRoot(*C), R.Root) << R.Spelling;
    EXPECT_EQ(plan::takesSplits(*C), R.Splits) << R.Spelling;
  }
  EXPECT_EQ(NumComms, plan::NumCommKinds);
  EXPECT_EQ(plan::parseCommKind("compute"), llvm::None);
}

TEST(Collectives, ParserListsEveryKeywordWhenTheOpIsUnknown) {
  std::string D = diagnose("program @p world(2) {\n  %r = all_reduse sum %a in @w\n}\n");
  std::string Want = "unknown op 'all_reduse'; expected ";
  for (size_t I = 0; I != std::size(Rows); ++I)
    Want += std::string(I == 0 ? "" : I + 1 == std::size(Rows) ? " or " : ", ") + Rows[I].Spelling;
  EXPECT_NE(D.find(Want), std::string::npos) << D;
}

TEST(Collectives, ParserAcceptsEveryKeywordAndThePlanSpellsItBack) {
  for (const Row &R : Rows) {
    SCOPED_TRACE(R.Spelling);
    std::string Text = std::string("program @p world(2) {\n  group @w = world\n"
                                   "  %a = compute @f : f32[8]\n  ") +
                       useOf(R.Kind) + "\n}\n";
    ParsedProgram Q = parseOK(Text);
    ASSERT_NE(Q.Prog, nullptr);
    EXPECT_EQ(diagnose(Text), "");
    EXPECT_TRUE(llvm::any_of(Q.Prog->ops(), [&](const Op &O) { return O.Kind == R.Kind; }));
    // The printer spells it back, and what it prints parses to the same text.
    std::string Printed = printProgram(*Q.Prog);
    EXPECT_NE(Printed.find(std::string(" ") + R.Spelling + " "), std::string::npos) << Printed;
    ParsedProgram Again = parseOK(Printed);
    ASSERT_NE(Again.Prog, nullptr);
    EXPECT_EQ(printProgram(*Again.Prog), Printed);
    if (!R.Comm)
      continue;
    // The plan writes the same word, and its reader takes it back.
    plan::Plan P = compileOK(Text);
    ASSERT_FALSE(P.Digest.empty()) << R.Spelling;
    std::string PlanText = plan::writePlan(P);
    EXPECT_NE(PlanText.find(std::string(" ") + R.Spelling + " "), std::string::npos) << PlanText;
    llvm::Expected<plan::Plan> Back = plan::readPlan(PlanText, "t.plan");
    ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
    EXPECT_TRUE(llvm::any_of(Back->Comms, [&](const plan::Comm &C) {
      return C.Kind == *commKindOf(R.Kind);
    }));
    EXPECT_EQ(plan::writePlan(*Back), PlanText);
  }
}

TEST(Collectives, FuzzDictionaryHasEveryKeyword) {
  auto Dict = llvm::MemoryBuffer::getFile(COLLC_FUZZ_DICT);
  ASSERT_TRUE(bool(Dict)) << COLLC_FUZZ_DICT << ": " << Dict.getError().message();
  llvm::SmallVector<llvm::StringRef, 64> Lines;
  (*Dict)->getBuffer().split(Lines, '\n');
  for (const Row &R : Rows)
    EXPECT_TRUE(llvm::is_contained(Lines, (llvm::Twine('"') + R.Spelling + "\"").str()))
        << R.Spelling << " is not in " << COLLC_FUZZ_DICT;
}
