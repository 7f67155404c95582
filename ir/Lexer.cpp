//===- ir/Lexer.cpp - Tokens of the collc text IR --------------------------===//

#include "ir/Lexer.h"

#include "ir/Quoting.h"

#include <cctype>

namespace collc {

bool isNameChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_' || C == '.' || C == '$' ||
         C == '-';
}

static bool isIdentStart(char C) { return std::isalpha(static_cast<unsigned char>(C)) || C == '_'; }
static bool isIdentChar(char C) { return std::isalnum(static_cast<unsigned char>(C)) || C == '_'; }
static bool isDigit(char C) { return C >= '0' && C <= '9'; }

Token Lexer::lexName(Token::Kind K, const char *Start, bool StartsLine) {
  // Cur points after the sigil.
  const char *NameStart = Cur;
  while (Cur != Buf.end() && isNameChar(*Cur))
    ++Cur;
  // A '-' may not end a name, so `%a-` followed by a digit stays readable;
  // give trailing dashes back.
  while (Cur != NameStart && Cur[-1] == '-')
    --Cur;
  if (Cur == NameStart)
    return Token{K == Token::ValueName ? Token::Percent : Token::Error, llvm::StringRef(Start, 1),
                 StartsLine};
  return Token{K, llvm::StringRef(NameStart, Cur - NameStart), StartsLine};
}

Token Lexer::next() {
  bool StartsLine = Cur == Buf.begin();
  // Skip whitespace and // comments.
  while (Cur != Buf.end()) {
    char C = *Cur;
    if (C == '\n') {
      StartsLine = true;
      ++Cur;
    } else if (C == ' ' || C == '\t' || C == '\r') {
      ++Cur;
    } else if (C == '/' && Cur + 1 != Buf.end() && Cur[1] == '/') {
      while (Cur != Buf.end() && *Cur != '\n')
        ++Cur;
    } else {
      break;
    }
  }
  const char *Start = Cur;
  if (Cur == Buf.end())
    return Token{Token::Eof, llvm::StringRef(Cur, 0), StartsLine};

  char C = *Cur++;
  auto Peek = [&](char Want) {
    if (Cur != Buf.end() && *Cur == Want) {
      ++Cur;
      return true;
    }
    return false;
  };
  switch (C) {
  case '{':
    return make(Token::LBrace, Start, StartsLine);
  case '}':
    return make(Token::RBrace, Start, StartsLine);
  case '(':
    return make(Token::LParen, Start, StartsLine);
  case ')':
    return make(Token::RParen, Start, StartsLine);
  case '[':
    return make(Token::LSquare, Start, StartsLine);
  case ']':
    return make(Token::RSquare, Start, StartsLine);
  case ',':
    return make(Token::Comma, Start, StartsLine);
  case ':':
    return make(Token::Colon, Start, StartsLine);
  case '+':
    return make(Token::Plus, Start, StartsLine);
  case '-':
    return make(Token::Minus, Start, StartsLine);
  case '*':
    return make(Token::Star, Start, StartsLine);
  case '/':
    return make(Token::Slash, Start, StartsLine);
  case '=':
    return make(Peek('=') ? Token::EqualEqual : Token::Equal, Start, StartsLine);
  case '<':
    return make(Peek('=') ? Token::LessEqual : Token::Less, Start, StartsLine);
  case '>':
    return make(Peek('=') ? Token::GreaterEqual : Token::Greater, Start, StartsLine);
  case '!':
    return make(Peek('=') ? Token::NotEqual : Token::Bang, Start, StartsLine);
  case '&':
    if (Peek('&'))
      return make(Token::AndAnd, Start, StartsLine);
    return make(Token::Error, Start, StartsLine);
  case '|':
    if (Peek('|'))
      return make(Token::OrOr, Start, StartsLine);
    return make(Token::Error, Start, StartsLine);
  case '%':
    // `%name` is a value; a lone `%` (followed by a space) is remainder.
    if (Cur != Buf.end() && isNameChar(*Cur) && *Cur != '-')
      return lexName(Token::ValueName, Start, StartsLine);
    return make(Token::Percent, Start, StartsLine);
  case '@':
    return lexName(Token::SymbolName, Start, StartsLine);
  case '"': {
    size_t Close = findClosingQuote(llvm::StringRef(Cur, Buf.end() - Cur));
    UnterminatedString = Close == llvm::StringRef::npos;
    if (UnterminatedString)
      return Token{Token::Error, llvm::StringRef(Start, 1), StartsLine};
    Cur += Close + 1;
    return Token{Token::String, llvm::StringRef(Start + 1, Cur - Start - 2), StartsLine};
  }
  default:
    break;
  }
  if (isDigit(C)) {
    while (Cur != Buf.end() && isDigit(*Cur))
      ++Cur;
    bool IsFloat = false;
    if (Cur + 1 < Buf.end() && *Cur == '.' && isDigit(Cur[1])) {
      IsFloat = true;
      ++Cur;
      while (Cur != Buf.end() && isDigit(*Cur))
        ++Cur;
    }
    // Exponent: 1e-3, 2.5E+4 (but not the `e` of a unit like `12us`).
    if (Cur != Buf.end() && (*Cur == 'e' || *Cur == 'E')) {
      const char *P = Cur + 1;
      if (P != Buf.end() && (*P == '+' || *P == '-'))
        ++P;
      if (P != Buf.end() && isDigit(*P)) {
        IsFloat = true;
        Cur = P;
        while (Cur != Buf.end() && isDigit(*Cur))
          ++Cur;
      }
    }
    return make(IsFloat ? Token::Float : Token::Integer, Start, StartsLine);
  }
  if (isIdentStart(C)) {
    while (Cur != Buf.end() && isIdentChar(*Cur))
      ++Cur;
    return make(Token::Identifier, Start, StartsLine);
  }
  return make(Token::Error, Start, StartsLine);
}

} // namespace collc
