#include "ir/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

using namespace collc;
using namespace llvm;

namespace {
struct Source {
  SourceMgr SM;
  unsigned Id;
  explicit Source(StringRef Text) {
    Id = SM.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(Text, "d.coll"), SMLoc());
  }
  SMLoc at(unsigned Line, unsigned Col) { return SM.FindLocForLineAndColumn(Id, Line, Col); }
};
} // namespace

TEST(Diagnostics, RendersFileLineColumnAndCaret) {
  Source S("abc\n  def\n");
  DiagnosticEngine D(&S.SM);
  D.error(S.at(2, 3), "bad def");
  EXPECT_EQ(D.renderAll(), "d.coll:2:3: error: bad def\n  def\n  ^\n");
  EXPECT_EQ(D.locationString(S.at(2, 3)), "d.coll:2:3");
  EXPECT_EQ(D.numErrors(), 1u);
}

TEST(Diagnostics, UnlocatedDiagnosticsStillRender) {
  DiagnosticEngine D;
  D.error({}, "no place");
  D.note({}, "context");
  EXPECT_EQ(D.renderAll(), "error: no place\nnote: context\n");
  EXPECT_EQ(D.numErrors(), 1u);
  Error E = D.takeError("verify");
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(toString(std::move(E)), "verify failed with 1 error:\nerror: no place\nnote: context");
}

TEST(Diagnostics, ExpectationsMatch) {
  Source S("x // expected-error {{bad x}}\n"
           "// expected-note@+1 {{here}}\n"
           "y\n");
  DiagnosticEngine D(&S.SM);
  D.error(S.at(1, 1), "this is a bad x indeed");
  D.note(S.at(3, 1), "declared here");
  EXPECT_FALSE(bool(D.verifyExpected(S.Id)));
}

TEST(Diagnostics, UnmetAndUnexpectedDiagnosticsAreReported) {
  Source S("x // expected-error {{bad x}}\ny\n");
  DiagnosticEngine D(&S.SM);
  D.error(S.at(2, 1), "bad y");
  Error E = D.verifyExpected(S.Id);
  ASSERT_TRUE(bool(E));
  std::string Msg = toString(std::move(E));
  EXPECT_NE(Msg.find("unexpected error: d.coll:2:1: error: bad y"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("expected error on line 1 was not produced: \"bad x\""), std::string::npos)
      << Msg;
}

TEST(Diagnostics, ExpectationSyntaxErrorsAreReported) {
  Source S("// expected-error@x {{a}}\n");
  DiagnosticEngine D(&S.SM);
  Error E = D.verifyExpected(S.Id);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(toString(std::move(E)).find("line 1: expected '+N', '-N', 'above' or 'below'"),
            std::string::npos);
}
