// ir/Quoting: the one spelling of quoted strings in the IR and the plan.
#include "TestUtil.h"

#include "ir/Quoting.h"

using namespace collc;

namespace {

/// The error of unquote(Body), as "offset: message" ("" when it decodes).
std::string errorOf(llvm::StringRef Body) {
  llvm::Expected<std::string> S = unquote(Body);
  if (S)
    return "";
  std::string Out;
  llvm::handleAllErrors(
      S.takeError(), [&](const UnquoteError &E) { Out = std::to_string(E.Offset) + ": " + E.Msg; });
  return Out;
}

std::string allBytes() {
  std::string S;
  for (int C = 0; C != 256; ++C)
    S += char(C);
  return S;
}

} // namespace

TEST(Quoting, WritesEveryEscape) {
  EXPECT_EQ(quoteString(""), "\"\"");
  EXPECT_EQ(quoteString("plain text"), "\"plain text\"");
  EXPECT_EQ(quoteString("q\" b\\ n\n t\t r\r"), R"("q\" b\\ n\n t\t r\r")");
  EXPECT_EQ(quoteString(llvm::StringRef("\x00\x01\x1f\x7f", 4)), R"("\x00\x01\x1f\x7f")");
  // Bytes from 0x80 pass through: UTF-8 stays readable.
  EXPECT_EQ(quoteString("caf\xc3\xa9 \xff"), "\"caf\xc3\xa9 \xff\"");
}

TEST(Quoting, ReadsEveryEscape) {
  llvm::Expected<std::string> S = unquote(R"(q\" b\\ n\n t\t r\r \x00\x7F\xfF)");
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  const char Want[] = "q\" b\\ n\n t\t r\r \x00\x7f\xff";
  EXPECT_EQ(*S, std::string(Want, sizeof(Want) - 1));
}

TEST(Quoting, EveryByteRoundTrips) {
  std::string All = allBytes();
  for (const std::string &S : {All, std::string(All.rbegin(), All.rend())}) {
    std::string Q = quoteString(S);
    EXPECT_EQ(Q.find('\n'), std::string::npos) << "a quoted string spans a line";
    ASSERT_EQ(findClosingQuote(llvm::StringRef(Q).drop_front()), Q.size() - 2);
    llvm::Expected<std::string> Back = unquote(llvm::StringRef(Q).drop_front().drop_back());
    ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
    EXPECT_EQ(*Back, S);
  }
  for (int C = 0; C != 256; ++C) {
    std::string S(1, char(C));
    std::string Q = quoteString(S);
    llvm::Expected<std::string> Back = unquote(llvm::StringRef(Q).drop_front().drop_back());
    ASSERT_TRUE(bool(Back)) << C << ": " << llvm::toString(Back.takeError());
    EXPECT_EQ(*Back, S) << C;
  }
}

TEST(Quoting, FindsTheClosingQuote) {
  EXPECT_EQ(findClosingQuote(R"(abc" rest)"), 3u);
  EXPECT_EQ(findClosingQuote(R"(a\"b" rest)"), 4u);
  EXPECT_EQ(findClosingQuote(R"(a\\" rest)"), 3u);
  EXPECT_EQ(findClosingQuote("open"), size_t(llvm::StringRef::npos));
  EXPECT_EQ(findClosingQuote("open\n\""), size_t(llvm::StringRef::npos));
  EXPECT_EQ(findClosingQuote("open\\\n\""), size_t(llvm::StringRef::npos));
  EXPECT_EQ(findClosingQuote("ends in \\"), size_t(llvm::StringRef::npos));
}

TEST(Quoting, NamesABadEscapeAndWhereItIs) {
  EXPECT_EQ(errorOf(R"(ab\qc)"), R"(2: unknown escape '\q'; expected \n, \t, \r, \", \\ or \xHH)");
  EXPECT_EQ(errorOf("a\\\x01"),
            R"(1: unknown escape '\<byte 0x01>'; expected \n, \t, \r, \", \\ or \xHH)");
  EXPECT_EQ(errorOf(R"(\x4g)"), R"(0: escape '\x4g' needs two hex digits)");
  EXPECT_EQ(errorOf(R"(abc\x4)"), R"(3: escape '\x4' needs two hex digits)");
  EXPECT_EQ(errorOf("abc\\"),
            R"(3: a lone '\' ends the string; expected \n, \t, \r, \", \\ or \xHH)");
  EXPECT_EQ(errorOf(R"(fine\tthen\z)"),
            R"(10: unknown escape '\z'; expected \n, \t, \r, \", \\ or \xHH)");
}

// The IR's attribute strings go through the same module: every byte
// survives print and parse.
TEST(Quoting, IRAttributeStringsRoundTripEveryByte) {
  Program P("q", 1);
  Op O;
  O.Kind = OpKind::Compute;
  O.Callee = P.save("c");
  std::string All = allBytes();
  O.setAttr("why", P.save(All));
  P.addOp(O);
  std::string Text = printProgram(P);
  ParsedProgram Back = test::parseOK(Text);
  ASSERT_NE(Back.Prog, nullptr) << Text;
  const Attribute *A = Back.Prog->ops()[0].getAttr("why");
  ASSERT_NE(A, nullptr);
  EXPECT_EQ(A->Str, All);
  EXPECT_EQ(printProgram(*Back.Prog), Text);
}

// Diagnostics quote input: control bytes and broken UTF-8 become \xHH,
// tabs, newlines and well-formed UTF-8 (2, 3 and 4 bytes) stay as they are.
TEST(Quoting, EscapeForMessage) {
  using namespace std::string_literals;
  EXPECT_EQ(escapeForMessage("plain %name @g"), "plain %name @g");
  EXPECT_EQ(escapeForMessage("a\0b"s), "a\\x00b");
  EXPECT_EQ(escapeForMessage("a\x7f\x1b[31m"), "a\\x7f\\x1b[31m");
  EXPECT_EQ(escapeForMessage("tab\tline\n"), "tab\tline\n");
  EXPECT_EQ(escapeForMessage("line\n", /*KeepNewlines=*/false), "line\\x0a");
  EXPECT_EQ(escapeForMessage("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  // A lone continuation byte, a truncated sequence, an overlong encoding.
  EXPECT_EQ(escapeForMessage("\x80"), "\\x80");
  EXPECT_EQ(escapeForMessage("x\xc3"), "x\\xc3");
  EXPECT_EQ(escapeForMessage("\xc0\xaf"), "\\xc0\\xaf");
}
