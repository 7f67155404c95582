//===- ir/RankExpr.cpp - Integer expressions over rank and world ----------===//

#include "ir/RankExpr.h"

#include "llvm/Support/ErrorHandling.h"

using namespace llvm;

namespace collc {

char RankExprError::ID = 0;

StringRef RankExpr::spelling(Kind K) {
  switch (K) {
  case Const:
    return "<const>";
  case Rank:
    return "rank";
  case World:
    return "world";
  case Neg:
    return "-";
  case Not:
    return "!";
  case Add:
    return "+";
  case Sub:
    return "-";
  case Mul:
    return "*";
  case Div:
    return "/";
  case Mod:
    return "%";
  case Min:
    return "min";
  case Max:
    return "max";
  case Lt:
    return "<";
  case Le:
    return "<=";
  case Gt:
    return ">";
  case Ge:
    return ">=";
  case Eq:
    return "==";
  case Ne:
    return "!=";
  case And:
    return "&&";
  case Or:
    return "||";
  }
  llvm_unreachable("bad rank expression kind");
}

unsigned RankExpr::precedence(Kind K) {
  switch (K) {
  case Or:
    return 1;
  case And:
    return 2;
  case Eq:
  case Ne:
    return 3;
  case Lt:
  case Le:
  case Gt:
  case Ge:
    return 4;
  case Add:
  case Sub:
    return 5;
  case Mul:
  case Div:
  case Mod:
    return 6;
  case Neg:
  case Not:
    return 7;
  case Const:
  case Rank:
  case World:
  case Min:
  case Max:
    return 8;
  }
  llvm_unreachable("bad rank expression kind");
}

Expected<int64_t> RankExpr::evaluate(int64_t RankV, int64_t WorldV) const {
  switch (K) {
  case Const:
    return Value;
  case Rank:
    return RankV;
  case World:
    return WorldV;
  default:
    break;
  }
  Expected<int64_t> L = LHS->evaluate(RankV, WorldV);
  if (!L)
    return L.takeError();
  if (K == Neg || K == Not) {
    if (K == Not)
      return int64_t(*L == 0);
    if (*L == INT64_MIN)
      return make_error<RankExprError>(Loc, "integer overflow in negation");
    return -*L;
  }
  // Short-circuit the logical operators so `rank > 0 && 8 / rank > 2` works.
  if (K == And && *L == 0)
    return int64_t(0);
  if (K == Or && *L != 0)
    return int64_t(1);
  Expected<int64_t> R = RHS->evaluate(RankV, WorldV);
  if (!R)
    return R.takeError();
  int64_t A = *L, B = *R, Out = 0;
  switch (K) {
  case Add:
    if (__builtin_add_overflow(A, B, &Out))
      return make_error<RankExprError>(Loc, "integer overflow in '+'");
    return Out;
  case Sub:
    if (__builtin_sub_overflow(A, B, &Out))
      return make_error<RankExprError>(Loc, "integer overflow in '-'");
    return Out;
  case Mul:
    if (__builtin_mul_overflow(A, B, &Out))
      return make_error<RankExprError>(Loc, "integer overflow in '*'");
    return Out;
  case Div:
  case Mod:
    if (B == 0)
      return make_error<RankExprError>(Loc, (K == Div ? "division by zero" : "remainder by zero") +
                                                std::string(""));
    if (A == INT64_MIN && B == -1)
      return make_error<RankExprError>(Loc, "integer overflow in division");
    // Floor semantics so that `(rank - 1) % world` wraps to world - 1 at
    // rank 0, which is what ring neighbours want.
    if (K == Div) {
      int64_t Q = A / B;
      if ((A % B != 0) && ((A < 0) != (B < 0)))
        --Q;
      return Q;
    } else {
      int64_t M = A % B;
      if (M != 0 && ((M < 0) != (B < 0)))
        M += B;
      return M;
    }
  case Min:
    return std::min(A, B);
  case Max:
    return std::max(A, B);
  case Lt:
    return int64_t(A < B);
  case Le:
    return int64_t(A <= B);
  case Gt:
    return int64_t(A > B);
  case Ge:
    return int64_t(A >= B);
  case Eq:
    return int64_t(A == B);
  case Ne:
    return int64_t(A != B);
  case And:
  case Or:
    return int64_t(B != 0);
  default:
    llvm_unreachable("not a binary operator");
  }
}

void RankExpr::printOperand(raw_ostream &OS, const RankExpr *E, unsigned MinPrec) const {
  bool Paren = precedence(E->K) < MinPrec;
  if (Paren)
    OS << '(';
  E->print(OS);
  if (Paren)
    OS << ')';
}

void RankExpr::print(raw_ostream &OS) const {
  switch (K) {
  case Const:
    // A negative constant is printed as a negation so the text re-parses
    // to the same tree (the parser never produces negative literals).
    OS << Value;
    return;
  case Rank:
  case World:
    OS << spelling(K);
    return;
  case Neg:
  case Not:
    OS << spelling(K);
    printOperand(OS, LHS, precedence(K));
    return;
  case Min:
  case Max:
    OS << spelling(K) << '(';
    LHS->print(OS);
    OS << ", ";
    RHS->print(OS);
    OS << ')';
    return;
  default:
    break;
  }
  unsigned P = precedence(K);
  printOperand(OS, LHS, P);
  OS << ' ' << spelling(K) << ' ';
  // Left associative: an equal-precedence right operand needs parentheses.
  printOperand(OS, RHS, P + 1);
}

std::string RankExpr::str() const {
  std::string S;
  raw_string_ostream OS(S);
  print(OS);
  return S;
}

bool RankExpr::equal(const RankExpr *A, const RankExpr *B) {
  if (A == B)
    return true;
  if (!A || !B || A->K != B->K || A->Value != B->Value)
    return false;
  return equal(A->LHS, B->LHS) && equal(A->RHS, B->RHS);
}

} // namespace collc
