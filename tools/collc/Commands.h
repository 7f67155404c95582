//===- tools/collc/Commands.h - collc subcommands -------------*- C++ -*-===//
//
// Each subcommand lives in its own file with its options; main() asks each
// whether it was selected and runs it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_COMMANDS_H
#define COLLC_TOOLS_COLLC_COMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace collc::tool {

#define COLLC_COMMAND(NAME)                                                                        \
  llvm::cl::SubCommand &NAME##Command();                                                           \
  int run_##NAME##Command();
#include "Commands.def"

} // namespace collc::tool

#endif // COLLC_TOOLS_COLLC_COMMANDS_H
