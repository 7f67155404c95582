// `bucket{policy=ddp}` against an independent implementation of PyTorch
// DDP's compute_bucket_assignment_by_size, on hand-made parameter lists
// with mixed types, and on GPT-2's.
#include "TestUtil.h"

#include "compiler/PassManager.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace collc;

namespace {

struct Param {
  std::string Name;
  ElemType Elem;
  int64_t Elements;
};

/// PyTorch's rule, written from its description: per dtype, append to the
/// open bucket; close it when its size reaches the dtype's current limit and
/// move that dtype to the next limit (the last repeats); close the rest at the
/// end; order buckets by their smallest tensor index.
std::vector<std::vector<std::string>> referenceDDP(const std::vector<Param> &Params,
                                                   const std::vector<int64_t> &Limits) {
  struct Open {
    std::vector<size_t> Indices;
    int64_t Bytes = 0;
    size_t Limit = 0;
  };
  std::map<ElemType, Open> ByType;
  std::vector<std::vector<size_t>> Done;
  for (size_t I = 0; I != Params.size(); ++I) {
    Open &O = ByType[Params[I].Elem];
    O.Indices.push_back(I);
    O.Bytes += Params[I].Elements * elemTypeBytes(Params[I].Elem);
    if (O.Bytes >= Limits[O.Limit]) {
      Done.push_back(O.Indices);
      O.Indices.clear();
      O.Bytes = 0;
      O.Limit = std::min(O.Limit + 1, Limits.size() - 1);
    }
  }
  for (auto &[T, O] : ByType)
    if (!O.Indices.empty())
      Done.push_back(O.Indices);
  std::sort(Done.begin(), Done.end(),
            [](const auto &A, const auto &B) { return A.front() < B.front(); });
  std::vector<std::vector<std::string>> Out;
  for (const auto &B : Done) {
    Out.emplace_back();
    for (size_t I : B)
      Out.back().push_back(Params[I].Name);
  }
  return Out;
}

/// The program DDP sees: each gradient produced, then all-reduced, then an
/// optimizer that uses them all.
std::string programFor(const std::vector<Param> &Params) {
  std::string S = "program @ddp world(2) {\n  group @dp = world\n";
  for (const Param &P : Params)
    S += llvm::formatv("  %g.{0} = compute @bwd.{0} : {1}[{2}]\n", P.Name, elemTypeName(P.Elem),
                       P.Elements)
             .str();
  for (const Param &P : Params)
    S += llvm::formatv("  %r.{0} = all_reduce avg %g.{0} in @dp\n", P.Name).str();
  S += "  compute @opt(";
  for (size_t I = 0; I != Params.size(); ++I)
    S += (I ? ", %r." : "%r.") + Params[I].Name;
  S += ")\n}\n";
  return S;
}

std::vector<std::vector<std::string>> collcBuckets(const std::string &Text,
                                                   llvm::StringRef Pipeline) {
  ParsedProgram PP = test::parseOK(Text);
  std::vector<std::vector<std::string>> Out;
  if (!PP.Prog)
    return Out;
  PassManager PM;
  EXPECT_FALSE(bool(PM.addPipeline(Pipeline)));
  DiagnosticEngine Diags(PP.Source.get());
  PassContext Ctx(Diags);
  std::string Log;
  llvm::raw_string_ostream OS(Log);
  if (llvm::Error E = PM.run(*PP.Prog, Ctx, OS)) {
    ADD_FAILURE() << llvm::toString(std::move(E));
    return Out;
  }
  std::map<int64_t, std::vector<std::string>> ById;
  for (const Op &O : PP.Prog->ops()) {
    const Attribute *B = O.getAttr("bucket");
    if (!B)
      continue;
    for (ValueId V : O.Operands)
      ById[B->Int].push_back(PP.Prog->value(V).Name.drop_front(2).str());
  }
  for (auto &[Id, Names] : ById)
    Out.push_back(Names);
  return Out;
}

void expectSame(const std::vector<Param> &Params, const std::vector<int64_t> &Limits,
                llvm::StringRef Pipeline) {
  auto Want = referenceDDP(Params, Limits);
  auto Got = collcBuckets(programFor(Params), Pipeline);
  EXPECT_EQ(Got, Want) << "pipeline " << Pipeline.str();
}

} // namespace

TEST(DDPBuckets, MixedTypesSmallLimits) {
  std::vector<Param> Params = {
      {"a", ElemType::F32, 100}, {"b", ElemType::BF16, 300}, {"c", ElemType::F32, 200},
      {"d", ElemType::F16, 50},  {"e", ElemType::F32, 300},  {"f", ElemType::BF16, 900},
      {"g", ElemType::F32, 10},  {"h", ElemType::F16, 700},  {"i", ElemType::F32, 2000},
      {"j", ElemType::BF16, 1},  {"k", ElemType::F64, 64},   {"l", ElemType::F32, 1},
  };
  expectSame(Params, {1024, 4096}, "order,bucket{limits=1KiB:4KiB}");
  expectSame(Params, {512}, "order,bucket{policy=fixed,bytes=512}");
  expectSame(Params, {256, 1024, 2048}, "order,bucket{limits=256:1KiB:2KiB}");
}

TEST(DDPBuckets, ExactLimitClosesTheBucket) {
  // 256 f32 elements are exactly 1 KiB: >= closes.
  std::vector<Param> Params = {
      {"a", ElemType::F32, 128}, {"b", ElemType::F32, 128}, {"c", ElemType::F32, 1}};
  expectSame(Params, {1024, 8192}, "bucket{limits=1KiB:8KiB}");
}

TEST(DDPBuckets, GPT2DefaultLimits) {
  // GPT-2 124M in DDP's order: reversed model.parameters().
  std::vector<Param> Forward = {{"wte", ElemType::F32, 50257 * 768},
                                {"wpe", ElemType::F32, 1024 * 768}};
  for (int L = 0; L != 12; ++L) {
    auto N = [&](const char *S) { return "h" + std::to_string(L) + "." + S; };
    Forward.push_back({N("ln_1.w"), ElemType::F32, 768});
    Forward.push_back({N("ln_1.b"), ElemType::F32, 768});
    Forward.push_back({N("attn.c_attn.w"), ElemType::F32, 768 * 2304});
    Forward.push_back({N("attn.c_attn.b"), ElemType::F32, 2304});
    Forward.push_back({N("attn.c_proj.w"), ElemType::F32, 768 * 768});
    Forward.push_back({N("attn.c_proj.b"), ElemType::F32, 768});
    Forward.push_back({N("ln_2.w"), ElemType::F32, 768});
    Forward.push_back({N("ln_2.b"), ElemType::F32, 768});
    Forward.push_back({N("mlp.c_fc.w"), ElemType::F32, 768 * 3072});
    Forward.push_back({N("mlp.c_fc.b"), ElemType::F32, 3072});
    Forward.push_back({N("mlp.c_proj.w"), ElemType::F32, 3072 * 768});
    Forward.push_back({N("mlp.c_proj.b"), ElemType::F32, 768});
  }
  Forward.push_back({"ln_f.w", ElemType::F32, 768});
  Forward.push_back({"ln_f.b", ElemType::F32, 768});
  ASSERT_EQ(Forward.size(), 148u);
  std::vector<Param> Reversed(Forward.rbegin(), Forward.rend());
  expectSame(Reversed, {1 << 20, 25 << 20}, "order,bucket");
}

TEST(DDPBuckets, TheGPT2ExampleMatchesDDP) {
  // The example's gradients in its canonical order are DDP's order.
  std::string Path = test::examplePath("gpt2_ddp");
  ParsedProgram P = test::parseOK(test::readOK(Path), Path);
  ASSERT_NE(P.Prog, nullptr);
  std::string Text = printProgram(*P.Prog);
  auto Got = collcBuckets(Text, "order,bucket");
  std::vector<Param> Params;
  // Gradient-ready order: the all_reduce operands in canonical order.
  ParsedProgram Ordered = test::parseOK(Text);
  PassManager PM;
  ASSERT_FALSE(bool(PM.addPipeline("order")));
  DiagnosticEngine Diags;
  PassContext Ctx(Diags);
  std::string Log;
  llvm::raw_string_ostream OS(Log);
  ASSERT_FALSE(bool(PM.run(*Ordered.Prog, Ctx, OS)));
  for (const Op &O : Ordered.Prog->ops())
    if (O.Kind == OpKind::AllReduce) {
      const Value &V = Ordered.Prog->value(O.Operands.front());
      Params.push_back({V.Name.drop_front(2).str(), V.Type.Elem, V.Type.numElements()});
    }
  ASSERT_EQ(Params.size(), 148u);
  EXPECT_EQ(Params.front().Name, "transformer.ln_f.weight");
  EXPECT_EQ(Params.back().Name, "transformer.wte.weight");
  EXPECT_EQ(Got, referenceDDP(Params, {1 << 20, 25 << 20}));
  EXPECT_EQ(Got.size(), 13u);
}
