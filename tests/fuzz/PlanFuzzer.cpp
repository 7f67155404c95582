//===- tests/fuzz/PlanFuzzer.cpp - libFuzzer target for plan files --------===//
//
// A plan file is untrusted input: feeds arbitrary bytes (seeded with the
// compiled plans of the examples and the golden inputs) through everything
// that consumes a plan. Invariants checked on every input:
//  - no crash, hang or sanitizer report in the reader and validator, the
//    NCCL lowering of every rank, every dump, and a dry run of the local
//    executor on every rank (create, bind every tensor, capture: every
//    instruction resolved, nothing issued);
//  - a plan that reads writes back to text that reads again into an equal
//    plan, with the canonical digest.
// The digest guards against accidents, not attackers: before reading, the
// target reseals the input's digest line as an attacker would, so that
// mutations reach the validator and everything behind it.
// Long run: see docs/testing.md.
//
//===----------------------------------------------------------------------===//

#include "plan/Plan.h"
#include "runtime/local/LocalExecutor.h"
#include "runtime/nccl/NcclListing.h"
#include "runtime/nccl/StreamOrderCheck.h"
#include "compiler/dump/Dump.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

using namespace collc;

namespace {

/// Executors and listings per rank cost time per input: the fuzzer looks at
/// the first ranks of wide plans (the reader and validator see them all).
constexpr int64_t MaxRanksExamined = 16;
/// A dry run allocates the plan's buffers and tensors; beyond this the run
/// is skipped (the reader has already checked the sizes).
constexpr uint64_t MaxDryRunBytes = uint64_t(64) << 20;

[[noreturn]] void fail(const char *What, const std::string &Detail) {
  fprintf(stderr, "%s\n%s\n", What, Detail.c_str());
  abort();
}

uint64_t bytesToAllocate(const plan::Plan &P) {
  uint64_t Sum = 0;
  for (const plan::Buffer &B : P.Buffers)
    Sum = llvm::SaturatingAdd(Sum, B.Bytes);
  for (const plan::Tensor &T : P.Tensors)
    Sum = llvm::SaturatingAdd(Sum, uint64_t(T.Type.bytes()));
  return Sum;
}

/// \p Text with its last digest line replaced by the digest of what is
/// above it (unchanged when it has none).
std::string resealed(llvm::StringRef Text) {
  size_t At = Text.rfind("\ndigest ");
  if (At == llvm::StringRef::npos)
    return Text.str();
  llvm::StringRef Above = Text.take_front(At + 1);
  llvm::StringRef Rest = Text.drop_front(At + 1);
  size_t LineEnd = Rest.find('\n');
  llvm::StringRef After = LineEnd == llvm::StringRef::npos ? "" : Rest.drop_front(LineEnd);
  return (Above + "digest " + plan::digestOfText(Above) + After).str();
}

void dryRun(const plan::Plan &P) {
  static std::atomic<unsigned> Runs{0};
  std::string Prefix = llvm::formatv("fuzz{0}", Runs++).str();
  for (int64_t R = 0; R != std::min(P.World, MaxRanksExamined); ++R) {
    rt::ExecutorOptions Opts;
    Opts.CommPrefix = Prefix;
    Opts.DigestHandshake = false; // one rank alone: no peer to shake hands with
    llvm::Expected<std::unique_ptr<rt::Executor>> X = rt::createLocalExecutor(P, R, Opts);
    if (!X) {
      llvm::consumeError(X.takeError());
      continue;
    }
    llvm::consumeError((*X)->bindOwnMemory());
    llvm::consumeError((*X)->capture());
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::string Text = resealed(llvm::StringRef(reinterpret_cast<const char *>(Data), Size));
  llvm::Expected<plan::Plan> P = plan::readPlan(Text, "fuzz.plan");
  if (!P) {
    llvm::consumeError(P.takeError());
    return 0;
  }
  std::string Written = plan::writePlan(*P);
  llvm::Expected<plan::Plan> Again = plan::readPlan(Written, "written.plan");
  if (!Again)
    fail("a plan that read does not read back after writing:", llvm::toString(Again.takeError()));
  // The input's own digest hashes its own spelling (which may be
  // uncanonical: extra spaces, leading zeros); the written plan's is the
  // canonical one. Everything else must come back as it was.
  plan::Plan Canonical = *P;
  Canonical.Digest = plan::computeDigest(*P);
  if (!(*Again == Canonical))
    fail("a plan written and read back differs from the one written:", Written);

  // The stream-order check once, as every consumer of the listing runs it.
  llvm::consumeError(rt::nccl::checkStreamOrder(*P));
  for (int64_t R = 0; R != std::min(P->World, MaxRanksExamined); ++R) {
    llvm::Expected<rt::nccl::NcclRankPlan> L = rt::nccl::lowerForRank(*P, R);
    if (!L) {
      llvm::consumeError(L.takeError());
      continue;
    }
    rt::nccl::printRankPlan(*P, *L, llvm::nulls());
  }
  DumpOptions Opts;
  Opts.Explain = true;
  dumpText(*P, Opts, llvm::nulls());
  dumpJSON(*P, Opts, llvm::nulls());
  llvm::consumeError(dumpDot(*P, Opts, llvm::nulls()));
  llvm::consumeError(dumpTrace(*P, Opts, llvm::nulls()));
  if (bytesToAllocate(*P) <= MaxDryRunBytes)
    dryRun(*P);
  return 0;
}
