//===- passes/Verify.cpp - The verifier as a pass -------------------------===//
//
// Requires: nothing. Ensures: the program satisfies every rule of
// ir/Verifier.h. Across ranks: checks each rank's specialization on its
// own; agreement between ranks is check-cross-rank's job. Never changes
// the program.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/Verifier.h"

using namespace llvm;

namespace collc {

namespace {
class VerifyPass : public Pass {
public:
  StringRef name() const override { return "verify"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override {
    if (Error E = verifyProgram(P, Ctx.Diags))
      return E;
    return false;
  }
};
} // namespace

Expected<std::unique_ptr<Pass>> createVerifyPass(PassOptions &Opts) {
  if (Error E = Opts.finish())
    return E;
  return std::make_unique<VerifyPass>();
}

} // namespace collc
