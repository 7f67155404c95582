//===- api/PlanApi.cpp - collc.h: compile, load, save, digest ----------===//

#include "api/ApiEntry.h"
#include "api/Handles.h"
#include "api/LiveHandles.h"

#include "compiler/Compile.h"
#include "plan/OutputFile.h"
#include "plan/PlanDiff.h"
#include "ir/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

using namespace llvm;
using namespace collc;
using namespace collc::api;

namespace collc::api {

/// A copy of \p S the caller frees with collcFree (malloc: collcFree is free).
Error returnString(const std::string &S, char **Out) {
  char *Copy = static_cast<char *>(std::malloc(S.size() + 1));
  if (!Copy)
    return makeApiError(collcSystemError, formatv("out of memory for {0} bytes", S.size() + 1));
  std::memcpy(Copy, S.data(), S.size() + 1);
  *Out = Copy;
  return Error::success();
}

} // namespace collc::api

namespace {

Error returnPlan(Expected<plan::Plan> P, collcPlan_t *Out) {
  if (!P)
    return P.takeError();
  *Out = adopt(
      std::make_unique<collcPlan>(collcPlan{std::make_shared<const plan::Plan>(std::move(*P))}));
  return Error::success();
}

Error checkPlan(Args &A, collcPlan_t Plan) { return A.plan(Plan, "plan").done(); }

/// The pipeline \p O asks for, as `collc compile` builds it from its flags.
Expected<std::string> pipelineOf(const collcCompileOptions_t &O) {
  bool Pipeline = O.pipeline && *O.pipeline;
  bool Layout = O.align != 0 || O.views != 1;
  if (Pipeline && (O.bucketPolicy || Layout || O.memoryBudget))
    return makeApiError(collcInvalidArgument,
                        "options->pipeline cannot be combined with bucketPolicy, align, views or "
                        "memoryBudget: expected them inside the pipeline (bucket{...}, "
                        "plan-memory{...}, schedule{memory-budget=...})");
  if (Pipeline)
    return std::string(O.pipeline);
  Expected<std::string> Bucket =
      bucketPassFor(O.bucketPolicy ? O.bucketPolicy : "ddp", O.memoryBudget);
  if (!Bucket)
    return makeApiError(collcInvalidArgument,
                        "options->bucketPolicy: " + toString(Bucket.takeError()));
  std::string Memory = "plan-memory";
  if (Layout) {
    uint64_t Align = O.align ? O.align : 256;
    if (Align & (Align - 1))
      return makeApiError(collcInvalidArgument,
                          formatv("options->align is {0}: expected a power of two", Align));
    if (O.views != 0 && O.views != 1)
      return makeApiError(collcInvalidArgument,
                          formatv("options->views is {0}: expected 0 or 1", O.views));
    Memory += formatv("{{align={0},views={1}}", Align, O.views ? "true" : "false").str();
  }
  return defaultPipeline(*Bucket, Memory, schedulePassFor(O.memoryBudget));
}

} // namespace

extern "C" {

collcResult_t collcCompileOptionsInitSized(collcCompileOptions_t *Options, size_t Size) {
  return entry(__func__, [&] {
    return initVersioned(Options, Size, collcCompileOptions_t COLLC_COMPILE_OPTIONS_INIT,
                         "options");
  });
}

// Version 1's symbol (collc.h's macro of this name calls the sized one).
collcResult_t(collcCompileOptionsInit)(collcCompileOptions_t *Options) {
  return entry(__func__, [&] {
    return initVersioned(Options, FirstVersionSize<collcCompileOptions_t>,
                         collcCompileOptions_t COLLC_COMPILE_OPTIONS_INIT, "options");
  });
}

collcResult_t collcCompile(const char *Program, const collcCompileOptions_t *Options,
                           collcPlan_t *Out) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Program, "program", "NUL-terminated program text")
        .notNull(Out, "plan", "where to store the plan")
        .versioned(Options, "options", /*Optional=*/true);
    if (Options)
      A.inRange(Options->world, "options->world", 0, MaxWorldSize);
    if (Error E = A.done())
      return E;
    // A caller's struct may be an earlier version: read only its fields.
    collcCompileOptions_t O =
        readVersioned(Options, collcCompileOptions_t COLLC_COMPILE_OPTIONS_INIT);
    CompileOptions Opts;
    // As `collc compile`: the unchanged-IR check is the tests' (collc opt).
    Opts.PM.CheckUnchanged = false;
    Expected<std::string> Pipeline = pipelineOf(O);
    if (!Pipeline)
      return Pipeline.takeError();
    Opts.Pipeline = *Pipeline;
    if (O.bucketPolicy)
      Opts.Notes.push_back(std::string("bucket: ") + O.bucketPolicy);
    ParseOptions Parse;
    Parse.WorldSize = O.world;
    Expected<ParsedProgram> P =
        parseProgramText(Program, O.sourceName ? O.sourceName : "<program>", Parse);
    if (!P)
      return P.takeError();
    DiagnosticEngine Diags(P->Source.get());
    // Diagnostics go into the error's text (the last error), not to stderr:
    // a library does not print.
    std::string Log;
    raw_string_ostream LogOS(Log);
    return returnPlan(compileProgram(*P->Prog, Opts, Diags, LogOS), Out);
  });
}

collcResult_t collcPlanLoad(const char *Text, collcPlan_t *Out) {
  return entry(__func__, [&]() -> Error {
    if (Error E = Args()
                      .notNull(Text, "text", "NUL-terminated plan text")
                      .notNull(Out, "plan", "where to store the plan")
                      .done())
      return E;
    return returnPlan(plan::readPlan(Text, "<plan text>"), Out);
  });
}

collcResult_t collcPlanLoadFile(const char *Path, collcPlan_t *Out) {
  return entry(__func__, [&]() -> Error {
    if (Error E = Args()
                      .notNull(Path, "path", "the path of a plan file")
                      .notNull(Out, "plan", "where to store the plan")
                      .done())
      return E;
    return returnPlan(plan::readPlanFile(Path), Out);
  });
}

collcResult_t collcPlanSave(collcPlan_t Plan, const char *Path) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Path, "path", "where to write the plan");
    if (Error E = checkPlan(A, Plan))
      return E;
    // As the tool writes its outputs (OutputFile.h): whole or not at all, a
    // device or a link written in place. "-" is a file of that name (a
    // library does not write to standard output).
    Expected<std::unique_ptr<OutputFile>> Out =
        OutputFile::create(Path, {}, /*DashIsStandardOutput=*/false);
    if (!Out)
      return makeApiError(collcSystemError, toString(Out.takeError()));
    plan::writePlan(*Plan->P, (*Out)->os());
    if (Error E = (*Out)->commit())
      return makeApiError(collcSystemError, toString(std::move(E)));
    return Error::success();
  });
}

collcResult_t collcPlanText(collcPlan_t Plan, char **Text) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Text, "text", "where to store the text");
    if (Error E = checkPlan(A, Plan))
      return E;
    std::string S;
    raw_string_ostream OS(S);
    plan::writePlan(*Plan->P, OS);
    return returnString(OS.str(), Text);
  });
}

collcResult_t collcPlanDigest(collcPlan_t Plan, const char **Digest) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Digest, "digest", "where to store the digest");
    if (Error E = checkPlan(A, Plan))
      return E;
    *Digest = Plan->P->Digest.c_str();
    return Error::success();
  });
}

collcResult_t collcPlanWorld(collcPlan_t Plan, int64_t *World) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(World, "world", "where to store the world size");
    if (Error E = checkPlan(A, Plan))
      return E;
    *World = Plan->P->World;
    return Error::success();
  });
}

collcResult_t collcPlanTensorType(collcPlan_t Plan, const char *Name, const char **ElemType,
                                  int64_t *Rank, const int64_t **Shape) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Name, "name", "a tensor name")
        .notNull(ElemType, "elemType", "where to store the element type")
        .notNull(Rank, "rank", "where to store the number of dimensions")
        .notNull(Shape, "shape", "where to store the dimensions");
    if (Error E = checkPlan(A, Plan))
      return E;
    const plan::Plan &P = *Plan->P;
    StringRef Wanted = plan::tensorName(Name);
    // Plans hold hundreds of tensors, not millions: a scan in plan order.
    for (const plan::Tensor &T : P.Tensors) {
      if (T.Name != Wanted)
        continue;
      *ElemType = elemTypeName(T.Type.Elem).data();
      *Rank = int64_t(T.Type.Shape.size());
      *Shape = T.Type.Shape.empty() ? nullptr : T.Type.Shape.data();
      return Error::success();
    }
    return makeApiError(
        collcInvalidArgument,
        formatv("name is \"{0}\": plan @{1} has no tensor %{2}", Name, P.Program, Wanted));
  });
}

collcResult_t collcPlanDiff(collcPlan_t PlanA, collcPlan_t PlanB, char **Diff) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.plan(PlanA, "a").plan(PlanB, "b").notNull(Diff, "diff", "where to store the differences");
    if (Error E = A.done())
      return E;
    std::string S;
    for (const std::string &Line : diffPlans(*PlanA->P, *PlanB->P))
      S += Line + "\n";
    return returnString(S, Diff);
  });
}

collcResult_t collcPlanDestroy(collcPlan_t Plan) {
  return entry(__func__, [&]() -> Error {
    if (!Plan)
      return Error::success();
    Args A;
    if (Error E = A.plan(Plan, "plan").done())
      return E;
    return destroy(Plan, "plan", A.releaseUse(Plan));
  });
}

void collcFree(void *P) { std::free(P); }

collcResult_t collcGetVersion(int *Version) {
  return entry(__func__, [&]() -> Error {
    if (Error E = Args().notNull(Version, "version", "where to store the version").done())
      return E;
    *Version = COLLC_VERSION_CODE;
    return Error::success();
  });
}

} // extern "C"
