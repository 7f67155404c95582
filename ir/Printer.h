//===- ir/Printer.h - Program to text IR -------------------------*- C++ -*-===//
//
// The printer's output parses back to a program that prints identically:
// print(parse(print(P))) == print(P). Groups come first, then ops in
// program order; result types are always written.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_PRINTER_H
#define COLLC_IR_PRINTER_H

#include "ir/Program.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace collc {

void printProgram(const Program &P, llvm::raw_ostream &OS);
std::string printProgram(const Program &P);
/// One op on one line, without indentation or newline.
void printOp(const Program &P, const Op &O, llvm::raw_ostream &OS);
/// A cost in the largest unit that holds it exactly: 12us, 1500ns, 2s.
void printDuration(int64_t Ns, llvm::raw_ostream &OS);

} // namespace collc

#endif // COLLC_IR_PRINTER_H
