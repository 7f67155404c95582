//===- passes/Passes.h - Factories of every pass -----------------*- C++ -*-===//
//
// One factory per pass, declared from the registry table so the list never
// drifts from compiler/Passes.def.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_PASSES_H
#define COLLC_PASSES_PASSES_H

#include "passes/Pass.h"

namespace collc {

#define COLLC_PASS(NAME, FACTORY, SUMMARY)                                                         \
  llvm::Expected<std::unique_ptr<Pass>> FACTORY(PassOptions &Opts);
#include "passes/Passes.def"

} // namespace collc

#endif // COLLC_PASSES_PASSES_H
