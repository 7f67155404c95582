//===- tests/runtime/JointCasesTest.cpp - Rank-conditional cases, locally -===//
//
// Every case of JointCases.h through `collc compile`'s pipeline: those MPI
// runs compile and run verified on local ranks (threads); those it would
// hang or fail on are refused, naming the ranks and ops. The same valid
// cases run on mpi in MpiExecutorTest.cpp.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/JointCases.h"
#include "tests/runtime/LocalReplay.h"

#include "compiler/Compile.h"

#include "gtest/gtest.h"

#include <set>

using namespace collc;
using namespace collc::test;

namespace {

TEST(JointCasesTest, ThereAreAHundredCoveringEveryKind) {
  std::vector<JointCase> Cases = jointCases();
  EXPECT_GE(Cases.size(), 100u);
  std::set<std::string> Names;
  for (const JointCase &C : Cases) {
    EXPECT_TRUE(Names.insert(C.Name).second) << "two cases named " << C.Name;
    // The label says what MPI does, and the refused ones what to expect.
    EXPECT_TRUE(llvm::StringRef(C.Mpi).startswith("runs: ") ||
                llvm::StringRef(C.Mpi).startswith("hangs: ") ||
                llvm::StringRef(C.Mpi).startswith("fails: "))
        << C.Name << ": " << C.Mpi;
    EXPECT_EQ(C.Valid, C.Mentions.empty()) << C.Name;
  }
  for (const char *Kind : {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                           "all_to_all ", "all_to_all_v", "barrier", "async", "send", "recv",
                           "split("})
    EXPECT_TRUE(llvm::any_of(Cases, [&](const JointCase &C) {
      return C.Valid && C.Program.find(Kind) != std::string::npos;
    })) << "no valid case uses "
        << Kind;
}

TEST(JointCasesTest, WhatMpiRunsRunsVerifiedAndTheRestIsRefused) {
  size_t Ran = 0, Refused = 0;
  for (const JointCase &C : jointCases()) {
    SCOPED_TRACE(C.Name + " (MPI " + C.Mpi + ")\n" + C.Program);
    llvm::Expected<plan::Plan> P = compileProgramText(C.Program, "", C.Name);
    if (!C.Valid) {
      ASSERT_FALSE(bool(P)) << "compiled what MPI would not run";
      std::string Text = llvm::toString(P.takeError());
      for (const std::string &M : C.Mentions)
        EXPECT_NE(Text.find(M), std::string::npos) << "the error does not say '" << M << "':\n"
                                                   << Text;
      ++Refused;
      continue;
    }
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    ASSERT_EQ(P->World, C.World);
    std::vector<const plan::Plan *> Plans(size_t(C.World), &*P);
    std::vector<RankRun> Runs = runAll(Plans, 2, optionsFor("joint"));
    std::string Errors;
    for (int64_t R = 0; R != C.World; ++R)
      if (!Runs[R].Error.empty())
        Errors += "rank " + std::to_string(R) + ": " + Runs[R].Error + "\n";
    ASSERT_EQ(Errors, "");
    llvm::Expected<rt::CheckSummary> S = check(*P, Runs);
    ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
    ++Ran;
  }
  EXPECT_GT(Ran, 70u);
  EXPECT_GT(Refused, 20u);
}

} // namespace
