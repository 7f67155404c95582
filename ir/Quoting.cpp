//===- ir/Quoting.cpp - Quoted strings of the IR and plan text ------------===//

#include "ir/Quoting.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

char UnquoteError::ID = 0;

static bool needsEscape(unsigned char C) { return C == '"' || C == '\\' || C < 0x20 || C == 0x7f; }

void writeQuoted(raw_ostream &OS, StringRef S) {
  OS << '"';
  // Write runs of plain bytes at once; escape the rest.
  size_t Start = 0;
  for (size_t I = 0; I != S.size(); ++I) {
    unsigned char C = S[I];
    if (!needsEscape(C))
      continue;
    OS << S.slice(Start, I) << '\\';
    switch (C) {
    case '\n':
      OS << 'n';
      break;
    case '\t':
      OS << 't';
      break;
    case '\r':
      OS << 'r';
      break;
    case '"':
    case '\\':
      OS << C;
      break;
    default:
      OS << 'x' << hexdigit(C >> 4, /*LowerCase=*/true) << hexdigit(C & 15, true);
    }
    Start = I + 1;
  }
  OS << S.drop_front(Start) << '"';
}

std::string escapeForMessage(StringRef S, bool KeepNewlines) {
  std::string Out;
  Out.reserve(S.size());
  auto Hex = [&](unsigned char C) {
    Out += "\\x";
    Out += hexdigit(C >> 4, /*LowerCase=*/true);
    Out += hexdigit(C & 15, true);
  };
  for (size_t I = 0; I < S.size();) {
    unsigned char C = S[I];
    if (C >= 0x80) {
      // Well-formed UTF-8 stays readable; any other high byte is escaped.
      unsigned Len = getNumBytesForUTF8(C);
      const UTF8 *Seq = reinterpret_cast<const UTF8 *>(S.data() + I);
      if (I + Len <= S.size() && isLegalUTF8Sequence(Seq, Seq + Len)) {
        Out.append(S.data() + I, Len);
        I += Len;
      } else {
        Hex(C);
        ++I;
      }
      continue;
    }
    if ((C < 0x20 && C != '\t' && !(KeepNewlines && C == '\n')) || C == 0x7f)
      Hex(C);
    else
      Out += char(C);
    ++I;
  }
  return Out;
}

std::string quoteString(StringRef S) {
  std::string Out;
  raw_string_ostream OS(Out);
  writeQuoted(OS, S);
  return Out;
}

size_t findClosingQuote(StringRef Rest) {
  for (size_t I = 0; I < Rest.size(); ++I) {
    char C = Rest[I];
    if (C == '"')
      return I;
    if (C == '\n')
      return StringRef::npos;
    // A backslash takes the next byte with it, unless that ends the line.
    if (C == '\\' && I + 1 < Rest.size() && Rest[I + 1] != '\n')
      ++I;
  }
  return StringRef::npos;
}

/// A byte as a reader can see it in a message: itself when printable.
static std::string shown(unsigned char C) {
  if (isPrint(C))
    return std::string(1, char(C));
  return formatv("<byte 0x{0:x-2}>", unsigned(C));
}

static constexpr const char *ExpectedEscapes = "expected \\n, \\t, \\r, \\\", \\\\ or \\xHH";

Expected<std::string> unquote(StringRef Body) {
  std::string Out;
  Out.reserve(Body.size());
  size_t Start = 0; // the first byte not yet copied
  for (size_t I = 0; I < Body.size(); ++I) {
    if (Body[I] != '\\')
      continue;
    Out.append(Body.data() + Start, I - Start);
    if (I + 1 == Body.size())
      return make_error<UnquoteError>(I,
                                      formatv("a lone '\\' ends the string; {0}", ExpectedEscapes));
    char E = Body[I + 1];
    switch (E) {
    case 'n':
      Out += '\n';
      break;
    case 't':
      Out += '\t';
      break;
    case 'r':
      Out += '\r';
      break;
    case '"':
    case '\\':
      Out += E;
      break;
    case 'x': {
      StringRef Digits = Body.substr(I + 2, 2);
      if (Digits.size() != 2 || !isHexDigit(Digits[0]) || !isHexDigit(Digits[1]))
        return make_error<UnquoteError>(
            I, formatv("escape '\\x{0}' needs two hex digits", Digits.take_while(isPrint)));
      Out += char(hexDigitValue(Digits[0]) * 16 + hexDigitValue(Digits[1]));
      I += 2;
      break;
    }
    default:
      return make_error<UnquoteError>(
          I, formatv("unknown escape '\\{0}'; {1}", shown(E), ExpectedEscapes));
    }
    ++I;
    Start = I + 1;
  }
  Out.append(Body.data() + Start, Body.size() - Start);
  return Out;
}

} // namespace collc
