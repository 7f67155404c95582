// Determinism is correctness: ranks that disagree on order deadlock. Every
// example compiles to one digest however often it is compiled and wherever
// its objects land in memory (as if each rank compiled its own copy), and an
// equivalent input with independent collectives permuted gives the same
// digest too.
#include "TestUtil.h"

#include "llvm/ADT/StringExtras.h"

#include <memory>
#include <random>

using namespace collc;
using namespace collc::test;

namespace {

std::string digestOf(const std::string &Text) { return compileOK(Text).Digest; }

/// Reverses every run of consecutive collective lines. Consecutive
/// collectives in the examples never use each other's results, so the
/// program is equivalent.
std::string permuteCollectives(llvm::StringRef Text) {
  llvm::SmallVector<llvm::StringRef, 0> Lines;
  Text.split(Lines, '\n');
  auto IsCollective = [](llvm::StringRef L) {
    for (const char *K :
         {"= all_reduce ", "= all_gather ", "= reduce_scatter ", "= broadcast ", "= all_to_all "})
      if (L.contains(K))
        return true;
    return false;
  };
  std::string Out;
  size_t I = 0, Runs = 0;
  while (I < Lines.size()) {
    size_t J = I;
    while (J < Lines.size() && IsCollective(Lines[J]))
      ++J;
    if (J - I > 1)
      ++Runs;
    for (size_t K = J; K > I; --K)
      Out += Lines[K - 1].str() + "\n";
    if (J == I) {
      Out += Lines[I].str() + "\n";
      ++J;
    }
    I = J;
  }
  EXPECT_GT(Runs, 0u) << "nothing to permute";
  return Out;
}

} // namespace

TEST(Determinism, EveryRankCompilesTheSameDigest) {
  std::mt19937 Rng(12345);
  for (const std::string &Path : exampleFiles()) {
    std::string Text = readOK(Path);
    std::string First = digestOf(Text);
    ASSERT_FALSE(First.empty()) << Path;
    // Eight "ranks", each compiling with the heap in a different state, so
    // any order taken from pointers would show.
    std::vector<std::unique_ptr<char[]>> Junk;
    for (int Rank = 0; Rank != 8; ++Rank) {
      for (int K = 0; K != 64; ++K)
        Junk.emplace_back(new char[1 + Rng() % 4096]);
      EXPECT_EQ(digestOf(Text), First) << Path << " as rank " << Rank;
    }
  }
}

TEST(Determinism, PermutedIndependentCollectivesGiveTheSameDigest) {
  for (const std::string &Path : exampleFiles()) {
    std::string Text = readOK(Path);
    std::string Permuted = permuteCollectives(Text);
    ASSERT_NE(Permuted, Text) << Path;
    EXPECT_EQ(digestOf(Permuted), digestOf(Text)) << Path;
  }
}
