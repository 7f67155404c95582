//===- ir/Lexer.h - Tokens of the collc text IR ------------------*- C++ -*-===//
//
// Private to the parser. Newlines are whitespace, but every token remembers
// whether it starts a line so the parser can resynchronise there after an
// error and keep reporting.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_LEXER_H
#define COLLC_IR_LEXER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

namespace collc {

struct Token {
  enum Kind {
    Eof,
    Error,      ///< a character that starts no token; Text is that character
    Identifier, ///< bare word: keywords, element types, units
    ValueName,  ///< %name (Text excludes '%')
    SymbolName, ///< @name (Text excludes '@')
    Integer,
    Float,
    String, ///< Text is the raw contents between quotes, escapes unprocessed
    LBrace,
    RBrace,
    LParen,
    RParen,
    LSquare,
    RSquare,
    Comma,
    Colon,
    Equal,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    EqualEqual,
    NotEqual,
    AndAnd,
    OrOr,
    Bang,
  };
  Kind K = Eof;
  llvm::StringRef Text;
  bool StartsLine = false;

  /// Where the token starts, including the sigil of %value and @symbol.
  llvm::SMLoc loc() const {
    bool Sigil = K == ValueName || K == SymbolName || K == String;
    return llvm::SMLoc::getFromPointer(Text.data() - (Sigil ? 1 : 0));
  }
  bool is(Kind Other) const { return K == Other; }
  bool isKeyword(llvm::StringRef Word) const { return K == Identifier && Text == Word; }
};

class Lexer {
public:
  explicit Lexer(llvm::StringRef Buffer) : Buf(Buffer), Cur(Buffer.begin()) {}
  Token next();
  size_t bufferSize() const { return Buf.size(); }
  /// Where an unterminated string began, when the last Error token was one.
  bool lastErrorWasUnterminatedString() const { return UnterminatedString; }

private:
  Token make(Token::Kind K, const char *Start, bool StartsLine) {
    return Token{K, llvm::StringRef(Start, Cur - Start), StartsLine};
  }
  Token lexName(Token::Kind K, const char *Start, bool StartsLine);

  llvm::StringRef Buf;
  const char *Cur;
  bool UnterminatedString = false;
};

/// Characters allowed in %value and @symbol names.
bool isNameChar(char C);

} // namespace collc

#endif // COLLC_IR_LEXER_H
