//===- tools/collc/DumpCommand.cpp - collc dump ------------------------===//
//
// collc dump PLAN --format text|json|dot|trace|nccl [--explain] [--rank R]
//                 [--focus-rank R] [--focus-bucket B] [--focus-steps A..B]
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ToolSupport.h"
#include "plan/OutputFile.h"

#include "compiler/dump/Dump.h"
#include "runtime/nccl/NcclListing.h"
#include "runtime/nccl/StreamOrderCheck.h"
#include "passes/analysis/LinkFile.h"

#include "llvm/Support/FileSystem.h"

using namespace llvm;

namespace collc::tool {

namespace {
enum class Format { Text, JSON, Dot, Trace, Nccl };
}

static cl::SubCommand Cmd("dump", "Show a plan as text, JSON, Graphviz or a simulated trace");
static cl::opt<std::string> Input(cl::Positional, cl::desc("<plan, or a .coll program>"),
                                  cl::Required, cl::sub(Cmd));
static cl::opt<Format> Fmt("format", cl::desc("What to print"),
                           cl::values(clEnumValN(Format::Text, "text", "a readable summary"),
                                      clEnumValN(Format::JSON, "json", "JSON with `buckets`"),
                                      clEnumValN(Format::Dot, "dot", "a Graphviz graph"),
                                      clEnumValN(Format::Trace, "trace",
                                                 "a Chrome/Perfetto trace of the simulated step"),
                                      clEnumValN(Format::Nccl, "nccl",
                                                 "the CUDA/NCCL calls one rank issues (--rank)")),
                           cl::init(Format::Text), cl::sub(Cmd));
static cl::opt<bool> Explain("explain", cl::desc("Include why each pass decided what it did"),
                             cl::sub(Cmd));
static cl::opt<std::string> Link("link", cl::desc("Link class for the trace (see collc simulate)"),
                                 cl::init("h100-nvlink"), cl::sub(Cmd));
static cl::opt<std::string> Output("o", cl::desc("Output file (default: stdout)"), cl::init("-"),
                                   cl::sub(Cmd));
static cl::opt<std::string> Bucket("bucket", cl::desc("Bucket policy when compiling a program"),
                                   cl::init("ddp"), cl::sub(Cmd));

static cl::opt<int64_t> Rank("rank", cl::desc("The rank whose calls --format nccl lists"),
                             cl::init(0), cl::sub(Cmd));

// What --format dot shows. Named apart from --rank, which picks the rank
// --format nccl lists (a view of one rank, not a filter), and from
// `collc run --steps S`, a count.
static cl::opt<int64_t> FocusRank("focus-rank", cl::desc("--format dot: only the ops rank R runs"),
                                  cl::value_desc("R"), cl::sub(Cmd));
static cl::opt<int64_t> FocusBucket("focus-bucket",
                                    cl::desc("--format dot: bucket B's comm, its producers and "
                                             "consumers"),
                                    cl::value_desc("B"), cl::sub(Cmd));
static cl::opt<std::string> FocusSteps("focus-steps",
                                       cl::desc("--format dot: the ops of steps A..B (from 0)"),
                                       cl::value_desc("A..B"), cl::sub(Cmd));

cl::SubCommand &dumpCommand() { return Cmd; }

/// The --focus-* flags, or a usage error when one is given without
/// --format dot.
static Expected<DotFocus> focusFlags() {
  DotFocus F;
  bool Any = FocusRank.getNumOccurrences() || FocusBucket.getNumOccurrences() ||
             FocusSteps.getNumOccurrences();
  if (Any && Fmt != Format::Dot)
    return createStringError(inconvertibleErrorCode(),
                             "--focus-rank, --focus-bucket and --focus-steps apply to "
                             "--format dot only");
  if (FocusRank.getNumOccurrences())
    F.Rank = FocusRank;
  if (FocusBucket.getNumOccurrences())
    F.Bucket = FocusBucket;
  if (FocusSteps.getNumOccurrences()) {
    Expected<StepRange> R = parseStepRange(FocusSteps);
    if (!R)
      return R.takeError();
    F.Steps = *R;
  }
  return F;
}

int run_dumpCommand() {
  if (Rank.getNumOccurrences() && Fmt != Format::Nccl) {
    ErrorLine("collc dump") << "--rank applies to --format nccl only\n";
    return ExitUsage;
  }
  DumpOptions Opts;
  Opts.Explain = Explain;
  Expected<LinkClass> L = resolveLink(Link);
  if (!L) {
    ErrorLine("collc dump") << toString(L.takeError()) << '\n';
    return ExitUsage;
  }
  Opts.Link = *L;
  Expected<DotFocus> Focus = focusFlags();
  if (!Focus) {
    ErrorLine("collc dump") << toString(Focus.takeError()) << '\n';
    return ExitUsage;
  }
  Opts.Focus = *Focus;
  int Exit = ExitOk;
  std::optional<CommandInput> In = readBucketedInput("dump", Input, Bucket, Exit);
  if (!In)
    return Exit;
  Expected<plan::Plan> P = loadOrCompilePlan(*In, Bucket);
  if (!P)
    return reportError("dump", P.takeError());
  // Written beside the target and renamed on success: a failure leaves the
  // old output as it was (and the input is not an output).
  Expected<std::unique_ptr<OutputFile>> Out = OutputFile::create(Output, {StringRef(Input)});
  if (!Out) {
    ErrorLine("collc dump") << toString(Out.takeError()) << '\n';
    return ExitUserError;
  }
  switch (Fmt) {
  case Format::Text:
    dumpText(*P, Opts, (*Out)->os());
    break;
  case Format::JSON:
    dumpJSON(*P, Opts, (*Out)->os());
    break;
  case Format::Dot:
    if (Error E = dumpDot(*P, Opts, (*Out)->os()))
      return reportError("dump", std::move(E));
    break;
  case Format::Trace:
    if (Error E = dumpTrace(*P, Opts, (*Out)->os()))
      return reportError("dump", std::move(E));
    break;
  case Format::Nccl: {
    Expected<rt::nccl::NcclRankPlan> L = rt::nccl::lowerRunnableForRank(*P, Rank);
    if (!L)
      return reportError("dump", L.takeError());
    rt::nccl::printRankPlan(*P, *L, (*Out)->os());
    break;
  }
  }
  if (Error E = (*Out)->commit())
    return reportError("dump", std::move(E));
  return ExitOk;
}

} // namespace collc::tool
