//===- tools/collc/collc.cpp - The collc command-line tool -------------===//
//
// collc <subcommand> [options]; see `collc --help` and docs/cli.md.
// Exit codes: 0 success, 1 the input is wrong, 2 the command line is wrong,
// 3 a bug in collc.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"

#include "tools/collc/BatchMalloc.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace collc::tool;

namespace collc::tool {
/// For subcommands that find their sibling programs (bench, mpirun).
const char *CollcArgv0 = "collc";
} // namespace collc::tool

/// \p Rc, or a failure where standard output could not be written (a full
/// disk, a closed pipe): said once here, and cleared, since a stream left
/// in error aborts the process at exit.
static int withStandardOutputChecked(int Rc) {
  outs().flush();
  if (!outs().has_error())
    return Rc;
  ErrorLine("collc")
      << "cannot write standard output: " << outs().error().message() << '\n';
  outs().clear_error();
  return Rc == ExitOk ? ExitUserError : Rc;
}

int main(int argc, char **argv) {
  InitLLVM Init(argc, argv);
  CollcArgv0 = argv[0];
  collc::tuneMallocForBatchWork();
  std::string Errors;
  raw_string_ostream ErrStream(Errors);
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "collc: compile and run the collective communication of "
                                   "distributed model programs\n",
                                   &ErrStream)) {
    errs() << ErrStream.str();
    return ExitUsage;
  }
#define COLLC_COMMAND(NAME)                                                                        \
  if (NAME##Command())                                                                             \
    return withStandardOutputChecked(run_##NAME##Command());
#include "Commands.def"
  ErrorLine("collc") << "no subcommand given; see `collc --help`\n";
  return ExitUsage;
}
