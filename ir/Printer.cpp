//===- ir/Printer.cpp - Program to text IR --------------------------------===//

#include "ir/Printer.h"

#include "ir/Quoting.h"

using namespace llvm;

namespace collc {

void printDuration(int64_t Ns, raw_ostream &OS) {
  if (Ns != 0 && Ns % 1000000000 == 0)
    OS << Ns / 1000000000 << "s";
  else if (Ns != 0 && Ns % 1000000 == 0)
    OS << Ns / 1000000 << "ms";
  else if (Ns != 0 && Ns % 1000 == 0)
    OS << Ns / 1000 << "us";
  else
    OS << Ns << "ns";
}

/// Atoms print bare; anything else in parentheses, so `to (rank + 1)`.
static void printExprOperand(const RankExpr *E, raw_ostream &OS) {
  bool Atom =
      E->kind() == RankExpr::Const || E->kind() == RankExpr::Rank || E->kind() == RankExpr::World;
  if (Atom && !(E->isConst() && E->value() < 0)) {
    E->print(OS);
    return;
  }
  OS << '(';
  E->print(OS);
  OS << ')';
}

static void printValueList(const Program &P, ArrayRef<ValueId> Vs, raw_ostream &OS) {
  for (size_t I = 0; I != Vs.size(); ++I)
    OS << (I ? ", %" : "%") << P.value(Vs[I]).Name;
}

void printOp(const Program &P, const Op &O, raw_ostream &OS) {
  if (!O.Results.empty()) {
    printValueList(P, O.Results, OS);
    OS << " = ";
  }
  OS << opKindName(O.Kind);
  if (O.Async)
    OS << " async";
  if (O.Fenced)
    OS << " fenced";
  if (hasReduceOp(O.Kind)) {
    OS << ' ' << reduceOpName(O.Reduce);
    if (takesScale(O.Reduce))
      OS << '(' << formatExactDouble(O.Scale) << ')';
  }
  switch (O.Kind) {
  case OpKind::Compute:
    OS << " @" << O.Callee;
    if (!O.Operands.empty()) {
      OS << '(';
      printValueList(P, O.Operands, OS);
      OS << ')';
    }
    if (O.CostNs) {
      OS << " cost(";
      printDuration(O.CostNs, OS);
      OS << ')';
    }
    if (O.Stream)
      OS << " stream(" << O.Stream << ')';
    break;
  case OpKind::Send:
  case OpKind::Recv:
    if (O.Kind == OpKind::Send) {
      OS << ' ';
      printValueList(P, O.Operands, OS);
    }
    OS << (O.Kind == OpKind::Send ? " to " : " from ");
    printExprOperand(O.Peer, OS);
    if (O.Group != InvalidId)
      OS << " in @" << P.group(O.Group).Name;
    break;
  case OpKind::Barrier:
    OS << " in @" << P.group(O.Group).Name;
    break;
  case OpKind::Wait:
    OS << ' ';
    printValueList(P, O.Operands, OS);
    break;
  default:
    OS << ' ';
    printValueList(P, O.dataOperands(), OS);
    if (hasRoot(O.Kind)) {
      OS << " root ";
      printExprOperand(O.Peer, OS);
    }
    OS << " in @" << P.group(O.Group).Name;
    if (takesSplits(O.Kind)) {
      OS << " splits ";
      if (O.HasCountsOperand) {
        OS << '%' << P.value(O.countsOperand()).Name;
      } else {
        // A square matrix; its side is the group size.
        size_t N = 0;
        while (N * N < O.Splits.size())
          ++N;
        OS << '[';
        for (size_t R = 0; R != N; ++R) {
          OS << (R ? ", [" : "[");
          for (size_t C = 0; C != N && R * N + C < O.Splits.size(); ++C)
            OS << (C ? ", " : "") << O.Splits[R * N + C];
          OS << ']';
        }
        OS << ']';
      }
    }
    break;
  }
  if (!O.Results.empty() && !P.value(O.Results.front()).IsToken) {
    OS << " : ";
    for (size_t I = 0; I != O.Results.size(); ++I)
      OS << (I ? ", " : "") << P.value(O.Results[I]).Type.str();
  }
  if (O.When) {
    OS << " when ";
    O.When->print(OS);
  }
  if (!O.Attrs.empty()) {
    OS << " {";
    for (size_t I = 0; I != O.Attrs.size(); ++I) {
      const Attribute &A = O.Attrs[I];
      OS << (I ? ", " : "") << A.Key << " = ";
      if (A.IsString)
        writeQuoted(OS, A.Str);
      else
        OS << A.Int;
    }
    OS << '}';
  }
}

static void printGroup(const Group &G, raw_ostream &OS) {
  OS << "  group @" << G.Name << " = ";
  switch (G.K) {
  case Group::World:
    OS << "world";
    break;
  case Group::Ranks:
    OS << "ranks [";
    for (size_t I = 0; I != G.ExplicitRanks.size(); ++I)
      OS << (I ? ", " : "") << G.ExplicitRanks[I];
    OS << ']';
    break;
  case Group::Split:
    OS << "split(";
    G.Color->print(OS);
    OS << ", ";
    G.Key->print(OS);
    OS << ')';
    break;
  }
  OS << '\n';
}

void printProgram(const Program &P, raw_ostream &OS) {
  OS << "program @" << P.name() << " world(" << P.worldSize() << ") {\n";
  for (const Group &G : P.groups())
    printGroup(G, OS);
  // A p2p block's ops are contiguous (the verifier says so); a change of
  // block id closes one block and may open the next.
  uint32_t Open = InvalidId;
  for (const Op &O : P.ops()) {
    if (O.Batch != Open) {
      if (Open != InvalidId)
        OS << "  }\n";
      if (O.Batch != InvalidId)
        OS << "  p2p {\n";
      Open = O.Batch;
    }
    OS << (Open != InvalidId ? "    " : "  ");
    printOp(P, O, OS);
    OS << '\n';
  }
  if (Open != InvalidId)
    OS << "  }\n";
  OS << "}\n";
}

std::string printProgram(const Program &P) {
  std::string S;
  raw_string_ostream OS(S);
  printProgram(P, OS);
  return S;
}

} // namespace collc
