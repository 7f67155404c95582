//===- compiler/PassManager.h - Pipelines of passes --------------*- C++ -*-===//
//
// Pipeline strings name passes from passes/Passes.def with options:
//   verify,fuse{max-bytes=33554432,max-count=64},order
// The manager runs them top to bottom, and on request prints the IR after
// each pass (or after each that changed it), verifies after each pass so a
// broken invariant blames the pass that broke it, times each pass, and
// collects statistics. It always checks that a pass that reports
// "unchanged" left the printed IR byte-identical.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_PASSMANAGER_H
#define COLLC_COMPILER_PASSMANAGER_H

#include "passes/Pass.h"

#include "llvm/Support/raw_ostream.h"

namespace collc {

/// One entry of a pipeline string.
struct PassSpec {
  std::string Name;
  std::vector<std::pair<std::string, std::string>> Options;
};

/// Splits "a,b{k=v,k2=v2},c" into specs. Syntax errors name the column.
llvm::Expected<std::vector<PassSpec>> parsePipeline(llvm::StringRef Text);

/// Every registered pass: name and summary, in registry order.
std::vector<std::pair<llvm::StringRef, llvm::StringRef>> registeredPasses();

/// Creates a pass from a spec, validating its options.
llvm::Expected<std::unique_ptr<Pass>> createPass(const PassSpec &Spec);

struct PassManagerOptions {
  bool PrintAfterAll = false;
  bool PrintAfterChange = false;
  bool VerifyEach = false;
  bool TimePasses = false;
  /// Print the IR before each pass and compare after it when the pass says
  /// it changed nothing. Costs a print per pass; on by default.
  bool CheckUnchanged = true;
};

class PassManager {
public:
  explicit PassManager(PassManagerOptions Opts = {}) : Opts(Opts) {}

  void add(std::unique_ptr<Pass> P) { Passes.push_back(std::move(P)); }
  /// Parses \p Pipeline and adds its passes.
  llvm::Error addPipeline(llvm::StringRef Pipeline);
  size_t size() const { return Passes.size(); }

  /// Runs every pass on \p P. IR dumps and timings go to \p Log. Returns
  /// the first failure.
  llvm::Error run(Program &P, PassContext &Ctx, llvm::raw_ostream &Log);

private:
  PassManagerOptions Opts;
  std::vector<std::unique_ptr<Pass>> Passes;
};

} // namespace collc

#endif // COLLC_COMPILER_PASSMANAGER_H
