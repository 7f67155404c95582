// The tables of element types (ir/ElemTypes.def) and reduce ops
// (ir/ReduceOps.def): every spelling round-trips through the name lookups,
// the enums follow the tables, sizes and predicates say what the tables
// say, the "expected one of" lists name every row, and the parser takes
// every spelling in a program whose plan spells it back. The runtime's side
// of the tables (traits, NCCL and MPI names) is tests/runtime's
// ElementTraitsTest.
#include "TestUtil.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdint>

using namespace collc;
using namespace collc::test;

namespace {
/// One row of each table as the test sees it, read from the .def directly
/// so that the generated code is checked against the table, not itself.
struct TypeRow {
  ElemType Type;
  const char *Spelling;
  unsigned Bytes;
  bool Float;
};
const TypeRow TypeRows[] = {
#define COLLC_INT_TYPE(Enum, Spelling, Storage, Nccl, Mpi)                                         \
  {ElemType::Enum, Spelling, sizeof(Storage), false},
#define COLLC_FLOAT_TYPE(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite)      \
  {ElemType::Enum, Spelling, sizeof(Storage), true},
#include "ir/ElemTypes.def"
};

struct OpRow {
  ReduceOp Op;
  const char *Spelling;
  bool Scaled;
};
const OpRow OpRows[] = {
#define COLLC_PLAIN_REDUCE(Enum, Spelling, Combine, Mpi, Nccl) {ReduceOp::Enum, Spelling, false},
#define COLLC_SCALED_REDUCE(Enum, Spelling, Combine, Mpi) {ReduceOp::Enum, Spelling, true},
#include "ir/ReduceOps.def"
};

/// "a, b, c" of the rows' spellings.
template <typename Row, size_t N> std::string spellings(const Row (&Rows)[N]) {
  auto Spelling = [](const Row &R) { return llvm::StringRef(R.Spelling); };
  return llvm::join(llvm::map_range(llvm::makeArrayRef(Rows), Spelling), ", ");
}
} // namespace

TEST(TypeTables, ElementTypesAreTheTableInEnumOrder) {
  ASSERT_EQ(std::size(TypeRows), NumElemTypes);
  for (unsigned I = 0; I != NumElemTypes; ++I) {
    const TypeRow &R = TypeRows[I];
    SCOPED_TRACE(R.Spelling);
    EXPECT_EQ(unsigned(R.Type), I);
    EXPECT_EQ(elemTypeName(R.Type), R.Spelling);
    EXPECT_EQ(parseElemType(R.Spelling), R.Type);
    EXPECT_EQ(elemTypeBytes(R.Type), R.Bytes);
    EXPECT_EQ(isFloatType(R.Type), R.Float);
  }
  EXPECT_EQ(allElemTypeNames(), spellings(TypeRows));
  EXPECT_EQ(parseElemType("F32"), llvm::None);
}

TEST(TypeTables, ReduceOpsAreTheTableInEnumOrder) {
  ASSERT_EQ(std::size(OpRows), NumReduceOps);
  for (unsigned I = 0; I != NumReduceOps; ++I) {
    const OpRow &R = OpRows[I];
    SCOPED_TRACE(R.Spelling);
    EXPECT_EQ(unsigned(R.Op), I);
    EXPECT_EQ(reduceOpName(R.Op), R.Spelling);
    EXPECT_EQ(parseReduceOp(R.Spelling), R.Op);
    EXPECT_EQ(takesScale(R.Op), R.Scaled);
  }
  EXPECT_EQ(allReduceOpNames(), spellings(OpRows));
  EXPECT_EQ(parseReduceOp("Sum"), llvm::None);
}

TEST(TypeTables, TheParserListsEveryRowWhenASpellingIsUnknown) {
  std::string D = diagnose("program @p world(2) {\n  %a = compute @f : f33[8]\n}\n");
  EXPECT_NE(D.find("unknown element type 'f33'; expected one of " + spellings(TypeRows)),
            std::string::npos)
      << D;
  D = diagnose("program @p world(2) {\n  group @w = world\n  %a = compute @f : f32[8]\n"
               "  %r = all_reduce mean %a in @w\n}\n");
  EXPECT_NE(D.find("unknown reduce op 'mean'; expected one of " + spellings(OpRows)),
            std::string::npos)
      << D;
}

TEST(TypeTables, EveryTypeAndOpParsesAndThePlanSpellsItBack) {
  for (const TypeRow &T : TypeRows) {
    for (const OpRow &O : OpRows) {
      std::string Op = std::string(O.Spelling) + (O.Scaled ? "(0.5)" : "");
      SCOPED_TRACE(std::string(T.Spelling) + " " + Op);
      std::string Text = std::string("program @p world(2) {\n  group @w = world\n") +
                         "  %a = compute @f : " + T.Spelling + "[8]\n" +
                         "  %r = all_reduce " + Op + " %a in @w\n}\n";
      EXPECT_EQ(diagnose(Text), "");
      plan::Plan P = compileOK(Text);
      ASSERT_FALSE(P.Comms.empty());
      EXPECT_EQ(P.Comms[0].Elem, T.Type);
      EXPECT_EQ(P.Comms[0].Reduce, O.Op);
      std::string PlanText = plan::writePlan(P);
      std::string Written = std::string(" all_reduce ") + O.Spelling +
                            (O.Scaled ? " scale 0.5 " : " ") + T.Spelling + " ";
      EXPECT_NE(PlanText.find(Written), std::string::npos) << PlanText;
      llvm::Expected<plan::Plan> Back = plan::readPlan(PlanText, "t.plan");
      ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
      EXPECT_EQ(Back->Comms[0].Elem, T.Type);
      EXPECT_EQ(Back->Comms[0].Reduce, O.Op);
    }
  }
}
