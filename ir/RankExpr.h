//===- ir/RankExpr.h - Integer expressions over rank and world --*- C++ -*-===//
//
// Rank-dependent programs (pipeline stages, expert routing) name peers,
// roots, predicates and split colors with small integer expressions over
// `rank` (this process's world rank) and `world` (the world size). One
// program file describes every rank; the verifier evaluates each expression
// for rank = 0..world-1.
//
// Expressions are immutable, allocated in their program's arena, and
// compared structurally.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_RANKEXPR_H
#define COLLC_IR_RANKEXPR_H

#include "llvm/Support/Error.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace collc {

class RankExpr {
public:
  enum Kind : uint8_t {
    // Leaves.
    Const,
    Rank,
    World,
    // Unary.
    Neg,
    Not,
    // Binary, arithmetic.
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Min,
    Max,
    // Binary, predicates (0 or 1).
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
  };

  RankExpr(Kind K, llvm::SMLoc Loc, int64_t Value, const RankExpr *L, const RankExpr *R)
      : K(K), DependsOnRank(K == Rank || (L && L->DependsOnRank) || (R && R->DependsOnRank)),
        Loc(Loc), Value(Value), LHS(L), RHS(R) {}

  /// How deeply the parser lets parentheses, unary operators and min/max
  /// nest in one expression, so its recursion is bounded. Chains of binary
  /// operators are not limited: they parse in a loop, and evaluation,
  /// printing and comparison walk the tree with explicit stacks.
  static constexpr unsigned MaxNesting = 256;

  Kind kind() const { return K; }
  llvm::SMLoc loc() const { return Loc; }
  /// The value of a Const leaf.
  int64_t value() const { return Value; }
  const RankExpr *lhs() const { return LHS; }
  const RankExpr *rhs() const { return RHS; }
  /// False when the expression has the same value on every rank.
  bool dependsOnRank() const { return DependsOnRank; }
  bool isConst() const { return K == Const; }

  /// Evaluates the expression on \p Rank of a world of \p WorldSize.
  /// Division by zero and signed overflow are errors located at the
  /// offending operator. Evaluation, printing and comparison use explicit
  /// stacks, never recursion, so any depth the parser accepts is safe.
  llvm::Expected<int64_t> evaluate(int64_t Rank, int64_t WorldSize) const;

  /// Prints with the fewest parentheses that parse back to the same tree.
  void print(llvm::raw_ostream &OS) const;
  std::string str() const;

  /// Structural equality (locations ignored).
  static bool equal(const RankExpr *A, const RankExpr *B);

  static llvm::StringRef spelling(Kind K);
  /// Binding strength used by the parser and the printer; higher binds tighter.
  static unsigned precedence(Kind K);

private:
  Kind K;
  bool DependsOnRank;
  llvm::SMLoc Loc;
  int64_t Value;
  const RankExpr *LHS;
  const RankExpr *RHS;
};

/// The error of a failed evaluation: where, and why.
class RankExprError : public llvm::ErrorInfo<RankExprError> {
public:
  static char ID;
  RankExprError(llvm::SMLoc Loc, std::string Msg) : Loc(Loc), Msg(std::move(Msg)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Msg; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
  llvm::SMLoc Loc;
  std::string Msg;
};

} // namespace collc

#endif // COLLC_IR_RANKEXPR_H
