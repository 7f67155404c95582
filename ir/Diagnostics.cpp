//===- ir/Diagnostics.cpp - Located diagnostics ----------------------------===//

#include "ir/Diagnostics.h"

#include "ir/Quoting.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace collc {

void DiagnosticEngine::report(Severity S, SMLoc Loc, const Twine &Msg) {
  // Messages quote input (names, tokens); never pass its raw bytes on.
  Diags.push_back({S, Loc, escapeForMessage(Msg.str())});
  if (S == Severity::Error)
    ++NumErrors;
  if (Stream)
    render(*Stream, Diags.back());
}

void DiagnosticEngine::clear() {
  Diags.clear();
  NumErrors = 0;
}

static SourceMgr::DiagKind toDiagKind(Severity S) {
  switch (S) {
  case Severity::Error:
    return SourceMgr::DK_Error;
  case Severity::Warning:
    return SourceMgr::DK_Warning;
  case Severity::Note:
    return SourceMgr::DK_Note;
  }
  llvm_unreachable("bad severity");
}

static StringRef severityName(Severity S) {
  switch (S) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  llvm_unreachable("bad severity");
}

std::string DiagnosticEngine::locationString(SMLoc Loc) const {
  if (!SM || !Loc.isValid())
    return "";
  unsigned Buf = SM->FindBufferContainingLoc(Loc);
  if (!Buf)
    return "";
  auto LineCol = SM->getLineAndColumn(Loc, Buf);
  return (SM->getMemoryBuffer(Buf)->getBufferIdentifier() + ":" + Twine(LineCol.first) + ":" +
          Twine(LineCol.second))
      .str();
}

void DiagnosticEngine::render(raw_ostream &OS, const Diagnostic &D) const {
  if (SM && D.Loc.isValid() && SM->FindBufferContainingLoc(D.Loc)) {
    SMDiagnostic Raw = SM->GetMessage(D.Loc, toDiagKind(D.Kind), D.Message);
    // The quoted source line and the file name are input too: escape them,
    // and move the caret to where its byte lands in the escaped line.
    StringRef Line = Raw.getLineContents();
    std::string SafeLine = escapeForMessage(Line, /*KeepNewlines=*/false);
    std::string SafeFile = escapeForMessage(Raw.getFilename(), false);
    if (SafeLine == Line && SafeFile == Raw.getFilename()) {
      SM->PrintMessage(OS, Raw);
      return;
    }
    int Col = Raw.getColumnNo();
    if (Col >= 0 && size_t(Col) <= Line.size())
      Col = int(escapeForMessage(Line.take_front(Col), false).size());
    SMDiagnostic Safe(*SM, Raw.getLoc(), SafeFile, Raw.getLineNo(), Col, Raw.getKind(),
                      Raw.getMessage(), SafeLine, {});
    SM->PrintMessage(OS, Safe);
    return;
  }
  OS << severityName(D.Kind) << ": " << D.Message << '\n';
}

std::string DiagnosticEngine::renderAll() const {
  std::string S;
  raw_string_ostream OS(S);
  for (const Diagnostic &D : Diags)
    render(OS, D);
  return S;
}

Error DiagnosticEngine::takeError(StringRef What) const {
  if (!NumErrors)
    return Error::success();
  std::string Text = renderAll();
  if (!Text.empty() && Text.back() == '\n')
    Text.pop_back();
  return createStringError(inconvertibleErrorCode(), "%s failed with %u error%s:\n%s",
                           What.str().c_str(), NumErrors, NumErrors == 1 ? "" : "s", Text.c_str());
}

namespace {
struct Expectation {
  Severity Kind;
  unsigned Line;
  std::string Text;
  unsigned CommentLine;
  bool Matched = false;
};
} // namespace

/// Scans the buffer for `expected-<kind>[@offset] {{text}}` comments.
/// \p FirstLine: the line number of \p Buffer's first line.
static Error collectExpectations(StringRef Buffer, unsigned FirstLine,
                                 std::vector<Expectation> &Out) {
  SmallVector<StringRef, 0> Lines;
  Buffer.split(Lines, '\n');
  for (unsigned I = 0; I != Lines.size(); ++I) {
    StringRef Line = Lines[I];
    unsigned LineNo = FirstLine + I;
    size_t Pos = 0;
    while ((Pos = Line.find("expected-", Pos)) != StringRef::npos) {
      StringRef Rest = Line.drop_front(Pos + strlen("expected-"));
      Pos += strlen("expected-");
      Severity Kind;
      if (Rest.consume_front("error"))
        Kind = Severity::Error;
      else if (Rest.consume_front("warning"))
        Kind = Severity::Warning;
      else if (Rest.consume_front("note"))
        Kind = Severity::Note;
      else
        continue;
      int64_t Target = LineNo;
      if (Rest.consume_front("@")) {
        if (Rest.consume_front("above")) {
          Target = LineNo - 1;
        } else if (Rest.consume_front("below")) {
          Target = LineNo + 1;
        } else {
          bool Neg = Rest.startswith("-");
          if (!Rest.consume_front("+") && !Rest.consume_front("-"))
            return createStringError(inconvertibleErrorCode(),
                                     "line %u: expected '+N', '-N', 'above' or 'below' after "
                                     "'@' in an expected-diagnostic",
                                     LineNo);
          unsigned Off = 0;
          size_t Digits = Rest.find_first_not_of("0123456789");
          if (Rest.take_front(Digits).getAsInteger(10, Off))
            return createStringError(inconvertibleErrorCode(),
                                     "line %u: bad line offset in an expected-diagnostic", LineNo);
          Rest = Rest.drop_front(Digits);
          Target = Neg ? int64_t(LineNo) - Off : int64_t(LineNo) + Off;
        }
      }
      Rest = Rest.ltrim();
      if (!Rest.consume_front("{{"))
        return createStringError(inconvertibleErrorCode(),
                                 "line %u: expected '{{' after an expected-diagnostic", LineNo);
      size_t End = Rest.find("}}");
      if (End == StringRef::npos)
        return createStringError(inconvertibleErrorCode(),
                                 "line %u: unterminated '{{' in an expected-diagnostic", LineNo);
      if (Target < 1)
        return createStringError(inconvertibleErrorCode(),
                                 "line %u: expected-diagnostic points before the file", LineNo);
      Out.push_back({Kind, unsigned(Target), Rest.take_front(End).str(), LineNo});
    }
  }
  return Error::success();
}

Error DiagnosticEngine::verifyExpected(unsigned BufferID, std::optional<StringRef> Part) const {
  if (!SM)
    return createStringError(inconvertibleErrorCode(), "no source to read expectations from");
  const MemoryBuffer *MB = SM->getMemoryBuffer(BufferID);
  StringRef Text = Part ? *Part : MB->getBuffer();
  unsigned FirstLine =
      Part ? SM->getLineAndColumn(SMLoc::getFromPointer(Text.begin()), BufferID).first : 1;
  std::vector<Expectation> Expected;
  if (Error E = collectExpectations(Text, FirstLine, Expected))
    return E;

  std::string Problems;
  raw_string_ostream OS(Problems);
  for (const Diagnostic &D : Diags) {
    unsigned Line = 0;
    if (D.Loc.isValid() && SM->FindBufferContainingLoc(D.Loc) == BufferID)
      Line = SM->getLineAndColumn(D.Loc, BufferID).first;
    bool Found = false;
    for (Expectation &X : Expected) {
      if (X.Matched || X.Kind != D.Kind || X.Line != Line ||
          StringRef(D.Message).find(X.Text) == StringRef::npos)
        continue;
      X.Matched = true;
      Found = true;
      break;
    }
    if (!Found) {
      OS << "unexpected " << severityName(D.Kind) << ": ";
      render(OS, D);
    }
  }
  for (const Expectation &X : Expected)
    if (!X.Matched)
      OS << MB->getBufferIdentifier() << ":" << X.CommentLine << ": expected "
         << severityName(X.Kind) << " on line " << X.Line << " was not produced: \"" << X.Text
         << "\"\n";
  if (Problems.empty())
    return Error::success();
  return createStringError(inconvertibleErrorCode(), "%s", Problems.c_str());
}

} // namespace collc
