//===- ir/Parser.cpp - Text IR to Program ---------------------------------===//
//
// A recursive-descent parser over the Lexer's tokens. Structural errors
// (syntax, undefined or duplicate names, missing types) are reported here;
// semantic rules (shapes, ranges, every rank's specialization) belong to the
// verifier. After an error inside an item the parser skips to the next token
// that starts a line and goes on, so one run reports several mistakes; the
// results of a failed op are remembered so their uses do not cascade.
//
//===----------------------------------------------------------------------===//

#include "ir/Parser.h"

#include "ir/Lexer.h"
#include "ir/Quoting.h"
#include "ir/TypeInference.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace llvm;

namespace collc {

namespace {

class Parser {
public:
  Parser(StringRef Text, DiagnosticEngine &Diags, const ParseOptions &Opts)
      : Lex(Text), Diags(Diags), Opts(Opts) {
    Tok = Lex.next();
  }

  std::unique_ptr<Program> parseFile();

private:
  // --- token helpers ---------------------------------------------------
  void consume() { Tok = Lex.next(); }
  bool consumeIf(Token::Kind K) {
    if (!Tok.is(K))
      return false;
    consume();
    return true;
  }
  bool consumeKeyword(StringRef W) {
    if (!Tok.isKeyword(W))
      return false;
    consume();
    return true;
  }
  /// Reports "expected X" at the current token and returns false.
  bool errorExpected(const Twine &What);
  bool expect(Token::Kind K, StringRef What) {
    if (consumeIf(K))
      return true;
    return errorExpected(What);
  }
  bool expectKeyword(StringRef W) {
    if (consumeKeyword(W))
      return true;
    return errorExpected("'" + W + "'");
  }
  bool error(SMLoc Loc, const Twine &Msg) {
    Diags.error(Loc, Msg);
    return false;
  }
  std::string describe(const Token &T) const;
  /// Skips to the next token that starts a line (or the end of input),
  /// past the item that began at \p ItemStart.
  void recover(const char *ItemStart);

  // --- grammar ---------------------------------------------------------
  bool parseHeader();
  bool parseItem();
  bool parseGroup();
  bool parseOp();
  /// The pieces of an op, in source order; each reports its own error.
  using ResultNameList = SmallVector<std::pair<StringRef, SMLoc>, 2>;
  bool parseResultNames(ResultNameList &Names);
  bool checkResultNameCount(const Op &O, bool AsyncSend, bool HasResults,
                            const ResultNameList &Names, SMLoc OpLoc, SMLoc KindLoc);
  bool parseOperands(Op &O);
  bool parseComputeOperands(Op &O);
  bool parseCollectiveOperands(Op &O);
  bool parseResultTypes(const Op &O, bool AsyncSend, bool HasResults, size_t NameCount,
                        SmallVectorImpl<TensorType> &Types);
  bool inferResultTypes(const Op &O, size_t NameCount, SMLoc OpLoc,
                        SmallVectorImpl<TensorType> &Types);
  /// `p2p {` opens a block of sends and recvs issued together; `}` closes it.
  bool parseBatchStart();
  bool parseBatchEnd();
  bool parseInteger(int64_t &Out, StringRef What);
  bool parseType(TensorType &Out);
  bool parseValueUse(ValueId &Out);
  bool parseValueUses(SmallVectorImpl<ValueId> &Out);
  bool parseGroupRef(GroupId &Out);
  bool parseReduceOp(Op &O);
  bool parseDuration(int64_t &Ns);
  bool parseSplitMatrix(std::vector<int64_t> &Out);
  bool parseAttrDict(Op &O);
  bool parseString(std::string &Out);
  const RankExpr *parseExpr(unsigned MinPrec = 1);
  const RankExpr *parseUnary();
  const RankExpr *parsePrimary();
  /// Enters one level of nesting (a parenthesis, a unary operator, a
  /// min/max argument list) at \p Loc; false with an error past the limit.
  bool enterNesting(SMLoc Loc);

  Lexer Lex;
  Token Tok;
  DiagnosticEngine &Diags;
  const ParseOptions &Opts;
  std::unique_ptr<Program> Prog;
  /// Results of ops that failed to parse; uses of them are not re-reported.
  StringSet<> Poisoned;
  /// Set when a use named a poisoned value: the op fails without a message.
  bool SilentFailure = false;
  /// Current nesting of the rank expression being parsed (see enterNesting).
  unsigned ExprDepth = 0;
  /// The open p2p block's id (InvalidId outside), where it opened, the
  /// number of ops before it, and the next block's id.
  uint32_t Batch = InvalidId, NextBatch = 0;
  SMLoc BatchLoc;
  size_t BatchStartOps = 0;
};

/// Leaves a nesting level entered by Parser::enterNesting.
struct NestingExit {
  unsigned &Depth;
  ~NestingExit() { --Depth; }
};

std::string Parser::describe(const Token &T) const {
  switch (T.K) {
  case Token::Eof:
    return "end of input";
  case Token::ValueName:
    return ("'%" + T.Text + "'").str();
  case Token::SymbolName:
    return ("'@" + T.Text + "'").str();
  case Token::String:
    return ("\"" + T.Text + "\"").str();
  default:
    return ("'" + T.Text + "'").str();
  }
}

bool Parser::errorExpected(const Twine &What) {
  if (Tok.is(Token::Error) && Lex.lastErrorWasUnterminatedString())
    return error(Tok.loc(), "unterminated string");
  return error(Tok.loc(), "expected " + What + ", found " + describe(Tok));
}

void Parser::recover(const char *ItemStart) {
  // An error found at the first token of the next line (a missing operand
  // at the end of a line) must not swallow that line.
  if (!Tok.is(Token::Eof) && (!Tok.StartsLine || Tok.Text.data() == ItemStart))
    consume();
  while (!Tok.is(Token::Eof) && !Tok.StartsLine)
    consume();
}

bool Parser::parseInteger(int64_t &Out, StringRef What) {
  if (!Tok.is(Token::Integer))
    return errorExpected(What);
  if (Tok.Text.getAsInteger(10, Out))
    return error(Tok.loc(), "integer " + Tok.Text + " does not fit in 64 bits");
  consume();
  return true;
}

bool Parser::parseType(TensorType &Out) {
  SMLoc TypeLoc = Tok.loc();
  if (!Tok.is(Token::Identifier))
    return errorExpected("an element type (" + allElemTypeNames() + ")");
  Optional<ElemType> E = parseElemType(Tok.Text);
  if (!E)
    return error(Tok.loc(),
                 "unknown element type '" + Tok.Text + "'; expected one of " + allElemTypeNames());
  consume();
  Out = TensorType();
  Out.Elem = *E;
  if (!consumeIf(Token::LSquare))
    return true; // a scalar
  if (consumeIf(Token::RSquare))
    return true;
  do {
    if (Tok.is(Token::Minus))
      return error(Tok.loc(), "dimension sizes must be non-negative");
    int64_t D;
    if (!parseInteger(D, "a dimension size"))
      return false;
    Out.Shape.push_back(D);
  } while (consumeIf(Token::Comma));
  if (!expect(Token::RSquare, "',' or ']' in a shape"))
    return false;
  // Keep every byte size representable so later arithmetic is safe.
  if (Error Err = checkTensorSize(Out))
    return error(TypeLoc, "tensor type " + Out.str() + ": " + toString(std::move(Err)));
  return true;
}

bool Parser::parseValueUse(ValueId &Out) {
  if (!Tok.is(Token::ValueName))
    return errorExpected("a value name (%name)");
  Out = Prog->lookupValue(Tok.Text);
  if (Out == InvalidId) {
    if (Poisoned.count(Tok.Text)) {
      SilentFailure = true;
      return false;
    }
    return error(Tok.loc(), "use of undefined value %" + Tok.Text +
                                " (values must be defined before they are used)");
  }
  consume();
  return true;
}

bool Parser::parseValueUses(SmallVectorImpl<ValueId> &Out) {
  do {
    ValueId V;
    if (!parseValueUse(V))
      return false;
    Out.push_back(V);
  } while (consumeIf(Token::Comma));
  return true;
}

bool Parser::parseGroupRef(GroupId &Out) {
  if (!Tok.is(Token::SymbolName))
    return errorExpected("a group name (@name)");
  Out = Prog->lookupGroup(Tok.Text);
  if (Out == InvalidId)
    return error(Tok.loc(), "use of undefined group @" + Tok.Text);
  consume();
  return true;
}

bool Parser::parseReduceOp(Op &O) {
  if (!Tok.is(Token::Identifier))
    return errorExpected("a reduce op (" + allReduceOpNames() + ")");
  Optional<ReduceOp> R = collc::parseReduceOp(Tok.Text);
  if (!R)
    return error(Tok.loc(),
                 "unknown reduce op '" + Tok.Text + "'; expected one of " + allReduceOpNames());
  consume();
  O.Reduce = *R;
  if (!takesScale(*R))
    return true;
  if (!expect(Token::LParen, "'(' and the scale of premul_sum"))
    return false;
  bool Neg = consumeIf(Token::Minus);
  if (!Tok.is(Token::Float) && !Tok.is(Token::Integer))
    return errorExpected("a number");
  double V;
  if (Tok.Text.getAsDouble(V) || !std::isfinite(V))
    return error(Tok.loc(), "scale " + Tok.Text + " is not a finite number");
  consume();
  O.Scale = Neg ? -V : V;
  return expect(Token::RParen, "')'");
}

bool Parser::parseDuration(int64_t &Ns) {
  SMLoc Loc = Tok.loc();
  if (!Tok.is(Token::Integer) && !Tok.is(Token::Float))
    return errorExpected("a duration such as 12us");
  StringRef Number = Tok.Text;
  consume();
  if (!Tok.is(Token::Identifier) || Tok.Text.data() != Number.end())
    return error(Loc, "expected a unit (ns, us, ms, s) right after the number " + Number);
  int64_t Factor = StringSwitch<int64_t>(Tok.Text)
                       .Case("ns", 1)
                       .Case("us", 1000)
                       .Case("ms", 1000000)
                       .Case("s", 1000000000)
                       .Default(0);
  if (!Factor)
    return error(Tok.loc(), "unknown time unit '" + Tok.Text + "'; expected ns, us, ms or s");
  consume();
  double V;
  if (Number.getAsDouble(V))
    return error(Loc, "bad number " + Number);
  double Total = V * double(Factor);
  if (Total > 9.0e18)
    return error(Loc, "duration " + Number + " is too large");
  if (std::nearbyint(Total) != Total)
    return error(Loc, "duration must be a whole number of nanoseconds");
  Ns = int64_t(Total);
  return true;
}

bool Parser::parseSplitMatrix(std::vector<int64_t> &Out) {
  if (!expect(Token::LSquare, "'[' starting a split matrix or a %counts value"))
    return false;
  size_t Rows = 0, Width = 0;
  do {
    SMLoc RowLoc = Tok.loc();
    if (!expect(Token::LSquare, "'[' starting a row of split sizes"))
      return false;
    size_t RowStart = Out.size();
    do {
      if (Tok.is(Token::Minus))
        return error(Tok.loc(), "split sizes must be non-negative");
      int64_t V;
      if (!parseInteger(V, "a split size"))
        return false;
      Out.push_back(V);
    } while (consumeIf(Token::Comma));
    if (!expect(Token::RSquare, "',' or ']' in a row of split sizes"))
      return false;
    size_t Len = Out.size() - RowStart;
    if (Rows == 0)
      Width = Len;
    else if (Len != Width)
      return error(RowLoc, formatv("row {0} of the split matrix has {1} sizes but row 0 has {2}",
                                   Rows, Len, Width));
    ++Rows;
  } while (consumeIf(Token::Comma));
  SMLoc EndLoc = Tok.loc();
  if (!expect(Token::RSquare, "',' or ']' closing the split matrix"))
    return false;
  if (Rows != Width)
    return error(EndLoc, formatv("the split matrix must be square (one row and one column per "
                                 "group rank); it has {0} rows of {1}",
                                 Rows, Width));
  return true;
}

bool Parser::parseString(std::string &Out) {
  if (!Tok.is(Token::String))
    return errorExpected("a string");
  StringRef Raw = Tok.Text;
  Expected<std::string> S = unquote(Raw);
  if (!S) {
    size_t At = 0;
    std::string Msg;
    handleAllErrors(S.takeError(), [&](const UnquoteError &E) {
      At = E.Offset;
      Msg = E.Msg;
    });
    return error(SMLoc::getFromPointer(Raw.data() + At), Msg);
  }
  Out = std::move(*S);
  consume();
  return true;
}

bool Parser::parseAttrDict(Op &O) {
  // '{' already seen.
  consume();
  if (consumeIf(Token::RBrace))
    return true;
  do {
    if (!Tok.is(Token::Identifier))
      return errorExpected("an attribute name");
    StringRef Key = Tok.Text;
    SMLoc KeyLoc = Tok.loc();
    consume();
    if (O.getAttr(Key))
      return error(KeyLoc, "attribute '" + Key + "' is given twice");
    if (!expect(Token::Equal, "'=' after the attribute name"))
      return false;
    Attribute A;
    A.Key = Prog->save(Key);
    if (Tok.is(Token::String)) {
      std::string S;
      if (!parseString(S))
        return false;
      A.IsString = true;
      A.Str = Prog->save(S);
    } else {
      bool Neg = consumeIf(Token::Minus);
      int64_t V;
      if (!parseInteger(V, "an integer or a string attribute value"))
        return false;
      A.Int = Neg ? -V : V;
    }
    O.Attrs.push_back(A);
  } while (consumeIf(Token::Comma));
  return expect(Token::RBrace, "',' or '}' in the attribute list");
}

// --- rank expressions ----------------------------------------------------

static Optional<RankExpr::Kind> binaryOp(Token::Kind K) {
  switch (K) {
  case Token::Plus:
    return RankExpr::Add;
  case Token::Minus:
    return RankExpr::Sub;
  case Token::Star:
    return RankExpr::Mul;
  case Token::Slash:
    return RankExpr::Div;
  case Token::Percent:
    return RankExpr::Mod;
  case Token::Less:
    return RankExpr::Lt;
  case Token::LessEqual:
    return RankExpr::Le;
  case Token::Greater:
    return RankExpr::Gt;
  case Token::GreaterEqual:
    return RankExpr::Ge;
  case Token::EqualEqual:
    return RankExpr::Eq;
  case Token::NotEqual:
    return RankExpr::Ne;
  case Token::AndAnd:
    return RankExpr::And;
  case Token::OrOr:
    return RankExpr::Or;
  default:
    return None;
  }
}

bool Parser::enterNesting(SMLoc Loc) {
  if (ExprDepth < RankExpr::MaxNesting) {
    ++ExprDepth;
    return true;
  }
  return error(Loc, formatv("rank expression nests {0} levels deep here (parentheses, unary "
                            "operators, min/max); the limit is {1}",
                            ExprDepth + 1, RankExpr::MaxNesting));
}

// Binary operators by precedence climbing: a chain of one precedence
// (`0 + 0 + ... + 0`) is a loop, and only a tighter-binding operator
// recurses, so the call depth is bounded by the precedence levels times the
// nesting that enterNesting limits.
const RankExpr *Parser::parseExpr(unsigned MinPrec) {
  const RankExpr *LHS = parseUnary();
  if (!LHS)
    return nullptr;
  while (true) {
    // `rank %2` lexes as a value name; say what was meant.
    if (Tok.is(Token::ValueName) && Tok.Text.front() >= '0' && Tok.Text.front() <= '9') {
      error(Tok.loc(), "write the remainder operator with a space after it ('% " + Tok.Text +
                           "'); '%" + Tok.Text + "' is a value name");
      return nullptr;
    }
    Optional<RankExpr::Kind> K = binaryOp(Tok.K);
    if (!K || RankExpr::precedence(*K) < MinPrec)
      return LHS;
    SMLoc OpLoc = Tok.loc();
    consume();
    const RankExpr *RHS = parseExpr(RankExpr::precedence(*K) + 1);
    if (!RHS)
      return nullptr;
    LHS = Prog->makeExpr(*K, OpLoc, 0, LHS, RHS);
  }
}

const RankExpr *Parser::parseUnary() {
  SMLoc Loc = Tok.loc();
  if (Tok.is(Token::Minus) || Tok.is(Token::Bang)) {
    RankExpr::Kind K = Tok.is(Token::Minus) ? RankExpr::Neg : RankExpr::Not;
    if (!enterNesting(Loc))
      return nullptr;
    NestingExit Exit{ExprDepth};
    consume();
    const RankExpr *E = parseUnary();
    return E ? Prog->makeExpr(K, Loc, 0, E) : nullptr;
  }
  return parsePrimary();
}

const RankExpr *Parser::parsePrimary() {
  SMLoc Loc = Tok.loc();
  if (Tok.is(Token::Integer)) {
    int64_t V;
    if (!parseInteger(V, "an integer"))
      return nullptr;
    return Prog->makeConst(V, Loc);
  }
  if (Tok.is(Token::LParen)) {
    if (!enterNesting(Loc))
      return nullptr;
    NestingExit Exit{ExprDepth};
    consume();
    const RankExpr *E = parseExpr();
    if (!E || !expect(Token::RParen, "')'"))
      return nullptr;
    return E;
  }
  if (consumeKeyword("rank"))
    return Prog->makeExpr(RankExpr::Rank, Loc);
  if (consumeKeyword("world"))
    return Prog->makeExpr(RankExpr::World, Loc);
  if (Tok.isKeyword("min") || Tok.isKeyword("max")) {
    RankExpr::Kind K = Tok.isKeyword("min") ? RankExpr::Min : RankExpr::Max;
    if (!enterNesting(Loc))
      return nullptr;
    NestingExit Exit{ExprDepth};
    consume();
    if (!expect(Token::LParen, "'('"))
      return nullptr;
    const RankExpr *A = parseExpr();
    if (!A || !expect(Token::Comma, "','"))
      return nullptr;
    const RankExpr *B = parseExpr();
    if (!B || !expect(Token::RParen, "')'"))
      return nullptr;
    return Prog->makeExpr(K, Loc, 0, A, B);
  }
  if (Tok.is(Token::Identifier)) {
    error(Loc, "unknown name '" + Tok.Text +
                   "' in a rank expression; expected rank, world, an integer, min or max");
    return nullptr;
  }
  errorExpected("a rank expression");
  return nullptr;
}

// --- program structure ---------------------------------------------------

bool Parser::parseHeader() {
  if (!expectKeyword("program"))
    return false;
  if (!Tok.is(Token::SymbolName))
    return errorExpected("the program name (@name)");
  StringRef Name = Tok.Text;
  consume();
  if (!expectKeyword("world") || !expect(Token::LParen, "'('"))
    return false;
  SMLoc Loc = Tok.loc();
  int64_t World;
  if (!parseInteger(World, "the world size"))
    return false;
  if (World < 1 || World > MaxWorldSize)
    return error(Loc, formatv("world size {0} is not in 1..{1}", World, MaxWorldSize));
  if (Opts.WorldSize) {
    if (Opts.WorldSize < 1 || Opts.WorldSize > MaxWorldSize)
      return error(Loc, formatv("the requested world size {0} is not in 1..{1}", Opts.WorldSize,
                                MaxWorldSize));
    World = Opts.WorldSize;
  }
  if (!expect(Token::RParen, "')'") || !expect(Token::LBrace, "'{'"))
    return false;
  Prog = std::make_unique<Program>(Name, World);
  // Growing the op and value tables by doubling copies them and touches
  // fresh pages each time; a line is rarely shorter than ~40 bytes, so
  // reserving from the file size makes large files parse in one sweep.
  Prog->reserve(Lex.bufferSize() / 40);
  return true;
}

bool Parser::parseGroup() {
  SMLoc Loc = Tok.loc();
  consume(); // 'group'
  if (!Tok.is(Token::SymbolName))
    return errorExpected("a group name (@name)");
  Group G;
  G.Name = Tok.Text;
  G.Loc = Loc;
  SMLoc NameLoc = Tok.loc();
  consume();
  if (!expect(Token::Equal, "'='"))
    return false;
  if (consumeKeyword("world")) {
    G.K = Group::World;
  } else if (consumeKeyword("ranks")) {
    G.K = Group::Ranks;
    if (!expect(Token::LSquare, "'[' starting the rank list"))
      return false;
    do {
      int64_t R;
      if (Tok.is(Token::Minus))
        return error(Tok.loc(), "ranks must be non-negative");
      if (!parseInteger(R, "a rank"))
        return false;
      G.ExplicitRanks.push_back(R);
    } while (consumeIf(Token::Comma));
    if (!expect(Token::RSquare, "',' or ']' in the rank list"))
      return false;
  } else if (consumeKeyword("split")) {
    G.K = Group::Split;
    if (!expect(Token::LParen, "'(' and the color expression"))
      return false;
    if (!(G.Color = parseExpr()) || !expect(Token::Comma, "',' and the key expression") ||
        !(G.Key = parseExpr()) || !expect(Token::RParen, "')'"))
      return false;
  } else {
    return errorExpected("'world', 'ranks [...]' or 'split(color, key)'");
  }
  if (Prog->lookupGroup(G.Name) != InvalidId)
    return error(NameLoc, "group @" + G.Name + " is already defined");
  Expected<GroupId> Id = Prog->addGroup(std::move(G));
  if (!Id)
    return error(Loc, toString(Id.takeError()));
  return true;
}

bool Parser::parseResultNames(ResultNameList &Names) {
  if (!Tok.is(Token::ValueName))
    return true;
  do {
    if (!Tok.is(Token::ValueName))
      return errorExpected("a result name (%name)");
    Names.push_back({Tok.Text, Tok.loc()});
    consume();
  } while (consumeIf(Token::Comma));
  if (!expect(Token::Equal, "'=' after the result names")) {
    for (auto &R : Names)
      Poisoned.insert(R.first);
    return false;
  }
  for (auto &R : Names)
    if (Prog->lookupValue(R.first) != InvalidId)
      return error(R.second, "value %" + R.first + " is already defined");
  return true;
}

bool Parser::checkResultNameCount(const Op &O, bool AsyncSend, bool HasResults,
                                  const ResultNameList &Names, SMLoc OpLoc, SMLoc KindLoc) {
  if (!HasResults && !Names.empty())
    return error(OpLoc, opKindName(O.Kind) + " has no results" +
                            (O.Kind == OpKind::Send ? " (only `send async` names a token)" : ""));
  if (AsyncSend && Names.size() != 1)
    return error(KindLoc, Names.empty()
                              ? "send async needs a token name to wait for (%t = send async ...)"
                              : "send async defines one token, not several values");
  if (HasResults && O.Kind != OpKind::Compute && Names.empty())
    return error(KindLoc,
                 opKindName(O.Kind) + " needs result names (%r = " + opKindName(O.Kind) + " ...)");
  return true;
}

bool Parser::parseComputeOperands(Op &O) {
  if (!Tok.is(Token::SymbolName))
    return errorExpected("the compute name (@name)");
  O.Callee = Prog->save(Tok.Text);
  consume();
  if (consumeIf(Token::LParen)) {
    if (!Tok.is(Token::RParen) && !parseValueUses(O.Operands))
      return false;
    if (!expect(Token::RParen, "',' or ')' in the argument list"))
      return false;
  }
  while (true) {
    if (consumeKeyword("cost")) {
      if (!expect(Token::LParen, "'('") || !parseDuration(O.CostNs) ||
          !expect(Token::RParen, "')'"))
        return false;
    } else if (consumeKeyword("stream")) {
      SMLoc Loc = Tok.loc();
      int64_t S;
      if (!expect(Token::LParen, "'('") || !parseInteger(S, "a stream number") ||
          !expect(Token::RParen, "')'"))
        return false;
      if (S > 1023)
        return error(Loc, formatv("stream {0} is not in 0..1023", S));
      O.Stream = S;
    } else {
      return true;
    }
  }
}

bool Parser::parseCollectiveOperands(Op &O) {
  if (hasReduceOp(O.Kind) && !parseReduceOp(O))
    return false;
  if (!parseValueUses(O.Operands))
    return false;
  if (hasRoot(O.Kind) && (!expectKeyword("root") || !(O.Peer = parseExpr())))
    return false;
  if (!expectKeyword("in") || !parseGroupRef(O.Group))
    return false;
  if (!takesSplits(O.Kind))
    return true;
  if (!expectKeyword("splits"))
    return false;
  if (!Tok.is(Token::ValueName))
    return parseSplitMatrix(O.Splits);
  ValueId Counts;
  if (!parseValueUse(Counts))
    return false;
  O.Operands.push_back(Counts);
  O.HasCountsOperand = true;
  return true;
}

bool Parser::parseOperands(Op &O) {
  switch (O.Kind) {
  case OpKind::Compute:
    return parseComputeOperands(O);
  case OpKind::AllReduce:
  case OpKind::ReduceScatter:
  case OpKind::AllGather:
  case OpKind::AllToAll:
  case OpKind::AllToAllV:
  case OpKind::Broadcast:
    return parseCollectiveOperands(O);
  case OpKind::Send:
  case OpKind::Recv:
    if (O.Kind == OpKind::Send && !parseValueUses(O.Operands))
      return false;
    if (!expectKeyword(O.Kind == OpKind::Send ? "to" : "from") || !(O.Peer = parseExpr()))
      return false;
    return !consumeKeyword("in") || parseGroupRef(O.Group);
  case OpKind::Barrier:
    return expectKeyword("in") && parseGroupRef(O.Group);
  case OpKind::Wait:
    return parseValueUses(O.Operands);
  }
  llvm_unreachable("every op kind is parsed above");
}

bool Parser::parseResultTypes(const Op &O, bool AsyncSend, bool HasResults, size_t NameCount,
                              SmallVectorImpl<TensorType> &Types) {
  SMLoc TypesLoc = Tok.loc();
  if (!consumeIf(Token::Colon))
    return true;
  if (!HasResults || AsyncSend)
    return error(TypesLoc, AsyncSend ? "a send's token has no type"
                                     : opKindName(O.Kind) + " has no results to give types to");
  do {
    TensorType T;
    if (!parseType(T))
      return false;
    Types.push_back(std::move(T));
  } while (consumeIf(Token::Comma));
  if (Types.size() != NameCount)
    return error(TypesLoc, formatv("{0} result names but {1} types", NameCount, Types.size()));
  return true;
}

bool Parser::inferResultTypes(const Op &O, size_t NameCount, SMLoc OpLoc,
                              SmallVectorImpl<TensorType> &Types) {
  if (!hasInferredResultTypes(O.Kind))
    return error(OpLoc, opKindName(O.Kind) + " needs its result types written (': f32[...]')");
  // Every operand's type must be known, and the counts must agree.
  if (O.Operands.size() != NameCount)
    return error(OpLoc, formatv("{0} has {1} operands but {2} results; each operand has one result",
                                opKindName(O.Kind), O.Operands.size(), NameCount));
  for (unsigned I = 0; I != NameCount; ++I) {
    Expected<TensorType> T = inferResultType(*Prog, O, I);
    if (!T)
      return error(OpLoc, toString(T.takeError()));
    Types.push_back(std::move(*T));
  }
  return true;
}

bool Parser::parseOp() {
  SMLoc OpLoc = Tok.loc();
  ResultNameList ResultNames;
  if (!parseResultNames(ResultNames))
    return false;
  auto Fail = [&] {
    for (auto &R : ResultNames)
      Poisoned.insert(R.first);
    return false;
  };

  SMLoc KindLoc = Tok.loc();
  Optional<OpKind> Kind = Tok.is(Token::Identifier) ? parseOpKind(Tok.Text) : None;
  if (!Kind) {
    if (Tok.is(Token::Identifier))
      error(KindLoc, "unknown op '" + Tok.Text + "'; expected " + allOpKindNames());
    else
      errorExpected("an op");
    return Fail();
  }
  consume();
  Op O;
  O.Kind = *Kind;
  O.Loc = ResultNames.empty() ? KindLoc : OpLoc;

  // `send async` defines one value, its completion token.
  bool AsyncSend = *Kind == OpKind::Send && Tok.isKeyword("async");
  bool HasResults = hasResults(*Kind) || AsyncSend;
  if (!checkResultNameCount(O, AsyncSend, HasResults, ResultNames, OpLoc, KindLoc))
    return Fail();
  if (isCommunication(*Kind) && HasResults && consumeKeyword("async")) {
    O.Async = true;
    O.Fenced = consumeKeyword("fenced");
  }
  if (!parseOperands(O))
    return Fail();

  SmallVector<TensorType, 2> Types;
  if (!parseResultTypes(O, AsyncSend, HasResults, ResultNames.size(), Types))
    return Fail();
  if (consumeKeyword("when") && !(O.When = parseExpr()))
    return Fail();
  if (Tok.is(Token::LBrace) && !parseAttrDict(O))
    return Fail();
  if (!Tok.StartsLine && !Tok.is(Token::Eof) && !Tok.is(Token::RBrace)) {
    errorExpected("the end of the op (a new line)");
    return Fail();
  }

  // Results: written types, or inferred ones.
  if (AsyncSend)
    Types.push_back(tokenType());
  if (Types.empty() && !ResultNames.empty() &&
      !inferResultTypes(O, ResultNames.size(), OpLoc, Types))
    return Fail();
  for (unsigned I = 0; I != ResultNames.size(); ++I) {
    Expected<ValueId> V = Prog->addValue(ResultNames[I].first, std::move(Types[I]));
    if (!V) {
      error(ResultNames[I].second, toString(V.takeError()));
      return Fail();
    }
    Prog->value(*V).IsToken = AsyncSend;
    O.Results.push_back(*V);
  }
  O.Batch = Batch;
  Prog->addOp(std::move(O));
  return true;
}

bool Parser::parseItem() {
  SilentFailure = false;
  if (Tok.isKeyword("group")) {
    if (Batch != InvalidId)
      return error(Tok.loc(), "groups are declared outside p2p blocks");
    return parseGroup();
  }
  if (Tok.isKeyword("p2p"))
    return parseBatchStart();
  return parseOp();
}

bool Parser::parseBatchStart() {
  SMLoc Loc = Tok.loc();
  consume();
  if (Batch != InvalidId)
    return error(Loc, "p2p blocks do not nest");
  if (!expect(Token::LBrace, "'{' opening the p2p block"))
    return false;
  if (!Tok.StartsLine && !Tok.is(Token::Eof))
    return errorExpected("a new line after 'p2p {'");
  Batch = NextBatch++;
  BatchLoc = Loc;
  BatchStartOps = Prog->ops().size();
  return true;
}

bool Parser::parseBatchEnd() {
  consume(); // '}'
  bool Empty = Prog->ops().size() == BatchStartOps;
  Batch = InvalidId;
  if (Empty)
    return error(BatchLoc, "empty p2p block: it issues sends and recvs together");
  if (!Tok.StartsLine && !Tok.is(Token::Eof))
    return errorExpected("a new line after the '}' closing the p2p block");
  return true;
}

std::unique_ptr<Program> Parser::parseFile() {
  if (!parseHeader())
    return nullptr;
  while (true) {
    if (Tok.is(Token::RBrace)) {
      if (Batch == InvalidId)
        break;
      const char *ItemStart = Tok.Text.data();
      if (!parseBatchEnd())
        recover(ItemStart);
      continue;
    }
    if (Tok.is(Token::Eof)) {
      if (Batch != InvalidId)
        error(BatchLoc, "this p2p block is not closed before the end of input");
      error(Tok.loc(), "expected '}' closing program @" + Prog->name() + ", found end of input");
      return nullptr;
    }
    const char *ItemStart = Tok.Text.data();
    if (!parseItem())
      recover(ItemStart);
  }
  consume();
  if (!Tok.is(Token::Eof))
    error(Tok.loc(), "expected end of input after the program, found " + describe(Tok));
  // Every reader trusts a parsed program's groups to fit in memory.
  if (!Diags.hasErrors())
    if (std::optional<GroupBudgetExcess> X = checkGroupTableBudget(*Prog, GroupsNeeded::UsedByOps))
      error(X->Loc, X->Msg);
  if (Diags.hasErrors())
    return nullptr;
  return std::move(Prog);
}

} // namespace

Expected<std::unique_ptr<Program>> parseProgram(const SourceMgr &SM, unsigned BufferID,
                                                DiagnosticEngine &Diags, const ParseOptions &Opts,
                                                std::optional<StringRef> Part) {
  unsigned ErrorsBefore = Diags.numErrors();
  Parser P(Part ? *Part : SM.getMemoryBuffer(BufferID)->getBuffer(), Diags, Opts);
  std::unique_ptr<Program> Prog = P.parseFile();
  if (!Prog || Diags.numErrors() != ErrorsBefore)
    // Syntax and the types inferred while reading alike.
    return Diags.takeError("reading the program");
  Prog->setSourceMgr(&SM);
  return Prog;
}

static Expected<ParsedProgram> parseBuffer(std::unique_ptr<MemoryBuffer> Buffer,
                                           const ParseOptions &Opts) {
  ParsedProgram Out;
  Out.Source = std::make_unique<SourceMgr>();
  unsigned Id = Out.Source->AddNewSourceBuffer(std::move(Buffer), SMLoc());
  DiagnosticEngine Diags(Out.Source.get());
  Expected<std::unique_ptr<Program>> Prog = parseProgram(*Out.Source, Id, Diags, Opts);
  if (!Prog)
    return Prog.takeError();
  Out.Prog = std::move(*Prog);
  return Out;
}

Expected<ParsedProgram> parseProgramText(StringRef Text, StringRef BufferName,
                                         const ParseOptions &Opts) {
  return parseBuffer(MemoryBuffer::getMemBufferCopy(Text, BufferName), Opts);
}

Expected<ParsedProgram> parseProgramFile(StringRef Path, const ParseOptions &Opts) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFileOrSTDIN(Path);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read %s: %s", Path.str().c_str(),
                             Buf.getError().message().c_str());
  return parseBuffer(std::move(*Buf), Opts);
}

} // namespace collc
