//===- ir/RankExpr.cpp - Integer expressions over rank and world ----------===//

#include "ir/RankExpr.h"

#include "llvm/ADT/SmallVector.h"
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

/// Applies a unary or binary operator to already evaluated operands.
static Expected<int64_t> apply(const RankExpr &E, int64_t A, int64_t B) {
  int64_t Out = 0;
  switch (E.kind()) {
  case RankExpr::Not:
    return int64_t(A == 0);
  case RankExpr::Neg:
    if (A == INT64_MIN)
      return make_error<RankExprError>(E.loc(), "integer overflow in negation");
    return -A;
  case RankExpr::Add:
    if (__builtin_add_overflow(A, B, &Out))
      return make_error<RankExprError>(E.loc(), "integer overflow in '+'");
    return Out;
  case RankExpr::Sub:
    if (__builtin_sub_overflow(A, B, &Out))
      return make_error<RankExprError>(E.loc(), "integer overflow in '-'");
    return Out;
  case RankExpr::Mul:
    if (__builtin_mul_overflow(A, B, &Out))
      return make_error<RankExprError>(E.loc(), "integer overflow in '*'");
    return Out;
  case RankExpr::Div:
  case RankExpr::Mod: {
    bool IsDiv = E.kind() == RankExpr::Div;
    if (B == 0)
      return make_error<RankExprError>(E.loc(), IsDiv ? "division by zero" : "remainder by zero");
    if (A == INT64_MIN && B == -1)
      return make_error<RankExprError>(E.loc(), IsDiv ? "integer overflow in division"
                                                      : "integer overflow in remainder");
    // Floor semantics so that `(rank - 1) % world` wraps to world - 1 at
    // rank 0, which is what ring neighbours want.
    if (IsDiv) {
      int64_t Q = A / B;
      if ((A % B != 0) && ((A < 0) != (B < 0)))
        --Q;
      return Q;
    }
    int64_t M = A % B;
    if (M != 0 && ((M < 0) != (B < 0)))
      M += B;
    return M;
  }
  case RankExpr::Min:
    return std::min(A, B);
  case RankExpr::Max:
    return std::max(A, B);
  case RankExpr::Lt:
    return int64_t(A < B);
  case RankExpr::Le:
    return int64_t(A <= B);
  case RankExpr::Gt:
    return int64_t(A > B);
  case RankExpr::Ge:
    return int64_t(A >= B);
  case RankExpr::Eq:
    return int64_t(A == B);
  case RankExpr::Ne:
    return int64_t(A != B);
  case RankExpr::And:
  case RankExpr::Or:
    return int64_t(B != 0);
  default:
    llvm_unreachable("not an operator");
  }
}

Expected<int64_t> RankExpr::evaluate(int64_t RankV, int64_t WorldV) const {
  // Post-order with an explicit stack: a predicate of 100k terms must not
  // overflow the call stack. Each frame remembers which operand it waits
  // for; `Last` carries the value of the frame just finished to its parent.
  struct Frame {
    const RankExpr *E;
    int64_t L;
    bool HaveL;
  };
  SmallVector<Frame, 16> Stack;
  Stack.push_back({this, 0, false});
  int64_t Last = 0;
  bool Returning = false; // Last holds the value of the child just finished
  while (!Stack.empty()) {
    Frame &F = Stack.back();
    const RankExpr &E = *F.E;
    if (!Returning) {
      switch (E.K) {
      case Const:
        Last = E.Value;
        break;
      case Rank:
        Last = RankV;
        break;
      case World:
        Last = WorldV;
        break;
      default:
        Stack.push_back({E.LHS, 0, false});
        continue;
      }
      Stack.pop_back();
      Returning = true;
      continue;
    }
    if (!F.HaveL) {
      F.HaveL = true;
      F.L = Last;
      bool Done = true;
      if (E.K == Neg || E.K == Not) {
        Expected<int64_t> V = apply(E, Last, 0);
        if (!V)
          return V.takeError();
        Last = *V;
      } else if (E.K == And && Last == 0) {
        // Short-circuit the logical operators so `rank > 0 && 8 / rank > 2` works.
        Last = 0;
      } else if (E.K == Or && Last != 0) {
        Last = 1;
      } else {
        Done = false;
      }
      if (Done) {
        Stack.pop_back();
        continue;
      }
      Returning = false;
      Stack.push_back({E.RHS, 0, false});
      continue;
    }
    Expected<int64_t> V = apply(E, F.L, Last);
    if (!V)
      return V.takeError();
    Last = *V;
    Stack.pop_back();
  }
  return Last;
}

void RankExpr::print(raw_ostream &OS) const {
  // Iterative, for the same reason as evaluate: a work list of pieces in
  // reverse order, each an expression (parenthesized when it binds looser
  // than its context requires) or literal text.
  struct Piece {
    const RankExpr *E; // null: Text
    unsigned MinPrec;
    StringRef Text;
  };
  SmallVector<Piece, 32> Work;
  Work.push_back({this, 0, {}});
  while (!Work.empty()) {
    Piece P = Work.pop_back_val();
    if (!P.E) {
      OS << P.Text;
      continue;
    }
    const RankExpr &E = *P.E;
    switch (E.K) {
    case Const:
      OS << E.Value;
      continue;
    case Rank:
    case World:
      OS << spelling(E.K);
      continue;
    default:
      break;
    }
    unsigned Prec = precedence(E.K);
    bool Paren = Prec < P.MinPrec;
    if (Paren) {
      OS << '(';
      Work.push_back({nullptr, 0, ")"});
    }
    switch (E.K) {
    case Neg:
    case Not:
      OS << spelling(E.K);
      Work.push_back({E.LHS, Prec, {}});
      break;
    case Min:
    case Max:
      OS << spelling(E.K) << '(';
      Work.push_back({nullptr, 0, ")"});
      Work.push_back({E.RHS, 0, {}});
      Work.push_back({nullptr, 0, ", "});
      Work.push_back({E.LHS, 0, {}});
      break;
    default:
      // Left associative: an equal-precedence right operand needs parentheses.
      Work.push_back({E.RHS, Prec + 1, {}});
      Work.push_back({nullptr, 0, " "});
      Work.push_back({nullptr, 0, spelling(E.K)});
      Work.push_back({nullptr, 0, " "});
      Work.push_back({E.LHS, Prec, {}});
      break;
    }
  }
}

std::string RankExpr::str() const {
  std::string S;
  raw_string_ostream OS(S);
  print(OS);
  return S;
}

bool RankExpr::equal(const RankExpr *A, const RankExpr *B) {
  // Pairs still to compare; iterative so deep expressions cannot overflow.
  SmallVector<std::pair<const RankExpr *, const RankExpr *>, 16> Work;
  Work.push_back({A, B});
  while (!Work.empty()) {
    auto [X, Y] = Work.pop_back_val();
    if (X == Y)
      continue;
    if (!X || !Y || X->K != Y->K || X->Value != Y->Value)
      return false;
    Work.push_back({X->RHS, Y->RHS});
    Work.push_back({X->LHS, Y->LHS});
  }
  return true;
}

} // namespace collc
