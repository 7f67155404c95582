#include "TestUtil.h"

#include "compiler/PassManager.h"

using namespace collc;
using namespace collc::test;

TEST(Pipeline, ParsesNamesAndOptions) {
  llvm::Expected<std::vector<PassSpec>> S =
      parsePipeline("verify, fuse{max-bytes=32MiB, max-count=4},order");
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  ASSERT_EQ(S->size(), 3u);
  EXPECT_EQ((*S)[0].Name, "verify");
  EXPECT_EQ((*S)[1].Name, "fuse");
  ASSERT_EQ((*S)[1].Options.size(), 2u);
  EXPECT_EQ((*S)[1].Options[0].first, "max-bytes");
  EXPECT_EQ((*S)[1].Options[0].second, "32MiB");
  EXPECT_EQ((*S)[1].Options[1].first, "max-count");
  EXPECT_EQ((*S)[2].Name, "order");
  llvm::Expected<std::vector<PassSpec>> Empty = parsePipeline("");
  ASSERT_TRUE(bool(Empty));
  EXPECT_TRUE(Empty->empty());
}

TEST(Pipeline, SyntaxErrorsNameTheColumn) {
  auto Err = [](llvm::StringRef Text) {
    llvm::Expected<std::vector<PassSpec>> S = parsePipeline(Text);
    EXPECT_FALSE(bool(S)) << Text.str();
    return S ? std::string() : llvm::toString(S.takeError());
  };
  EXPECT_NE(Err("verify,,x").find("column 8: expected a pass name"), std::string::npos);
  EXPECT_NE(Err("fuse{max-bytes}").find("expected '=' after option 'max-bytes'"),
            std::string::npos);
  EXPECT_NE(Err("fuse{a=1").find("expected '}'"), std::string::npos);
  EXPECT_NE(Err("fuse{a=1,a=2}").find("option 'a' is given twice"), std::string::npos);
  EXPECT_NE(Err("verify verify").find("expected ',' between passes"), std::string::npos);
}

TEST(Pipeline, UnknownPassAndOptionAreErrors) {
  llvm::Expected<std::unique_ptr<Pass>> P = createPass({"nosuch", {}});
  ASSERT_FALSE(bool(P));
  EXPECT_NE(llvm::toString(P.takeError()).find("unknown pass 'nosuch'; known passes: verify"),
            std::string::npos);
  llvm::Expected<std::unique_ptr<Pass>> Q = createPass({"verify", {{"x", "1"}}});
  ASSERT_FALSE(bool(Q));
  EXPECT_NE(llvm::toString(Q.takeError()).find("pass 'verify' has no option 'x' (it takes none)"),
            std::string::npos);
}

TEST(PassOptions, TypedGettersAndByteSizes) {
  PassOptions O("t");
  O.set("n", "12");
  O.set("b", "32MiB");
  O.set("l", "1MiB:25MiB");
  O.set("f", "true");
  EXPECT_EQ(*O.getUInt("n", 0, ""), 12u);
  EXPECT_EQ(*O.getBytes("b", 0, ""), 32u << 20);
  EXPECT_EQ(*O.getBytesList("l", {}, ""), (std::vector<uint64_t>{1u << 20, 25u << 20}));
  EXPECT_TRUE(*O.getBool("f", false, ""));
  EXPECT_EQ(*O.getUInt("missing", 7, ""), 7u);
  EXPECT_FALSE(bool(O.finish()));

  PassOptions Bad("t");
  Bad.set("n", "x");
  llvm::Expected<uint64_t> N = Bad.getUInt("n", 0, "");
  ASSERT_FALSE(bool(N));
  EXPECT_EQ(llvm::toString(N.takeError()), "t{n=x}: expected a non-negative integer");
  EXPECT_EQ(*parseByteSize("25MB"), 25000000u);
  EXPECT_EQ(*parseByteSize("4KiB"), 4096u);
  llvm::Expected<uint64_t> Unit = parseByteSize("3 parsecs");
  ASSERT_FALSE(bool(Unit));
  llvm::consumeError(Unit.takeError());
}

namespace {
/// A pass that lies: it changes the program and says it did not.
class LyingPass : public Pass {
public:
  llvm::StringRef name() const override { return "liar"; }
  llvm::Expected<bool> run(Program &P, PassContext &) override {
    P.ops()[0].setAttr("touched", 1);
    return false;
  }
};
/// A pass that reports a change and counts something.
class CountingPass : public Pass {
public:
  llvm::StringRef name() const override { return "counter"; }
  llvm::Expected<bool> run(Program &P, PassContext &Ctx) override {
    P.ops()[0].setAttr("n", int64_t(P.ops().size()));
    Ctx.addStat("counter", "ops", P.ops().size());
    return true;
  }
};
const char *Small = "program @p world(2) {\n  %x = compute @a : f32[2]\n}\n";
} // namespace

TEST(PassManager, CatchesAPassThatChangesWhatItCallsUnchanged) {
  ParsedProgram P = parseOK(Small);
  ASSERT_NE(P.Prog, nullptr);
  PassManager PM;
  PM.add(std::make_unique<LyingPass>());
  DiagnosticEngine Diags;
  PassContext Ctx(Diags);
  std::string Log;
  llvm::raw_string_ostream OS(Log);
  llvm::Error E = PM.run(*P.Prog, Ctx, OS);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "internal error: pass 'liar' reported no change but changed the IR");
}

TEST(PassManager, PrintsAfterChangeAndCollectsStats) {
  ParsedProgram P = parseOK(Small);
  ASSERT_NE(P.Prog, nullptr);
  PassManagerOptions Opts;
  Opts.PrintAfterChange = true;
  Opts.VerifyEach = true;
  PassManager PM(Opts);
  ASSERT_FALSE(bool(PM.addPipeline("verify")));
  PM.add(std::make_unique<CountingPass>());
  DiagnosticEngine Diags;
  PassContext Ctx(Diags);
  std::string Log;
  llvm::raw_string_ostream OS(Log);
  ASSERT_FALSE(bool(PM.run(*P.Prog, Ctx, OS)));
  // verify changed nothing, so only the counter's IR is printed.
  EXPECT_EQ(OS.str().find("IR after verify"), std::string::npos) << Log;
  EXPECT_NE(OS.str().find("// -----// IR after counter //----- //\nprogram @p"), std::string::npos)
      << Log;
  EXPECT_NE(Log.find("{n = 1}"), std::string::npos) << Log;
  EXPECT_EQ(Ctx.Stats["counter.ops"], 1);
}
