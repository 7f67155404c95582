//===- passes/Pass.h - The interface every pass implements -------*- C++ -*-===//
//
// A pass transforms or analyses one Program. It returns an error (a user
// error already reported as a located diagnostic, or a failure to apply),
// or whether it changed the program. The pass manager checks that a pass
// reporting "unchanged" really left the printed IR byte-identical.
//
// Passes are created by factories listed in passes/Passes.def, from the
// options of a pipeline string: `fuse{max-bytes=33554432,max-count=64}`.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_PASS_H
#define COLLC_PASSES_PASS_H

#include "ir/Diagnostics.h"
#include "ir/Program.h"
#include "passes/analysis/BufferLayout.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace collc {

/// Options given to one pass in a pipeline string. Every getter records the
/// key as known; finish() rejects keys no getter asked for, so a typo in
/// `fuse{max-byts=1}` is an error rather than a silent default.
class PassOptions {
public:
  PassOptions() = default;
  explicit PassOptions(llvm::StringRef PassName) : PassName(PassName.str()) {}

  void set(llvm::StringRef Key, llvm::StringRef Value) { Values[Key] = Value.str(); }
  bool has(llvm::StringRef Key) const { return Values.count(Key); }

  llvm::Expected<uint64_t> getUInt(llvm::StringRef Key, uint64_t Default, llvm::StringRef Help);
  /// A byte size: 33554432, 32MiB, 25MB, 4KiB, 1GiB.
  llvm::Expected<uint64_t> getBytes(llvm::StringRef Key, uint64_t Default, llvm::StringRef Help);
  /// A ':'-separated list of byte sizes: 1MiB:25MiB.
  llvm::Expected<std::vector<uint64_t>>
  getBytesList(llvm::StringRef Key, llvm::ArrayRef<uint64_t> Default, llvm::StringRef Help);
  llvm::Expected<bool> getBool(llvm::StringRef Key, bool Default, llvm::StringRef Help);
  llvm::Expected<std::string> getString(llvm::StringRef Key, llvm::StringRef Default,
                                        llvm::StringRef Help);
  /// Fails on any key that no getter asked for, naming the known ones.
  llvm::Error finish() const;

  /// The options a pass declared, for --help and docs: key, help.
  const std::vector<std::pair<std::string, std::string>> &declared() const { return Declared; }

private:
  llvm::Error badValue(llvm::StringRef Key, llvm::StringRef Expected) const;
  const std::string *lookup(llvm::StringRef Key, llvm::StringRef Help);

  std::string PassName;
  llvm::StringMap<std::string> Values;
  std::vector<std::pair<std::string, std::string>> Declared;
};

/// Parses "33554432", "32MiB", "25MB", "4KiB", "1GiB" or "512B".
llvm::Expected<uint64_t> parseByteSize(llvm::StringRef Text);

/// What a pass can reach while it runs.
struct PassContext {
  DiagnosticEngine &Diags;
  /// Counters, "pass.counter" -> value, sorted by name.
  std::map<std::string, int64_t> Stats;
  /// The pipeline's buffer layout options: those of its last plan-memory,
  /// set before any pass runs (Pass::preparePipeline: schedule's memory
  /// budget and bucket's memory rule run before plan-memory and measure the
  /// plan's buffers with them). None: no plan-memory in the pipeline
  /// (BufferLayoutOptions' defaults).
  std::optional<BufferLayoutOptions> Layout;
  /// plan-memory's result, an analysis the lowering consumes as it is (the
  /// plan's buffers are the ones the IR's `mem` attributes state, computed
  /// once): set by plan-memory, and dropped by the pass manager when a
  /// later pass changes the program. Null: none holds for the program.
  std::shared_ptr<const BufferLayout> MemoryPlan;
  /// The least peak-memory budget per rank a pass was given
  /// (schedule{memory-budget=}, bucket{memory-budget=}), and that pass's
  /// name: compileProgram checks the final plan against it. 0: none.
  uint64_t MemoryBudget = 0;
  std::string MemoryBudgetPass;

  explicit PassContext(DiagnosticEngine &D) : Diags(D) {}
  void addStat(llvm::StringRef PassName, llvm::StringRef Counter, int64_t N) {
    Stats[(PassName + "." + Counter).str()] += N;
  }
  /// Records that \p PassName planned within \p Budget bytes per rank.
  void addMemoryBudget(llvm::StringRef PassName, uint64_t Budget) {
    if (Budget && (!MemoryBudget || Budget < MemoryBudget)) {
      MemoryBudget = Budget;
      MemoryBudgetPass = PassName.str();
    }
  }
};

class Pass {
public:
  virtual ~Pass() = default;
  virtual llvm::StringRef name() const = 0;
  /// An error, or whether the program changed.
  virtual llvm::Expected<bool> run(Program &P, PassContext &Ctx) = 0;
  /// Called on every pass of a pipeline, in order, before the first runs:
  /// what a pass fixes for the whole pipeline (plan-memory: the layout
  /// options in PassContext::Layout).
  virtual void preparePipeline(PassContext &Ctx) const {}
};

} // namespace collc

#endif // COLLC_PASSES_PASS_H
