//===- tests/runtime/HostPagesTest.cpp - Plan buffers and kept scratch ---===//

#include "runtime/exec/HostPages.h"
#include "runtime/exec/SpareScratch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace collc::rt;

namespace {

bool isZero(const HostPages &P) {
  for (uint64_t I = 0; I != P.size(); ++I)
    if (P.data()[I] != 0)
      return false;
  return true;
}

/// What /proc/self/smaps says of the mapping that holds an address.
struct Mapping {
  uintptr_t End = 0;   ///< 0: no mapping holds it
  std::string VmFlags; ///< its "VmFlags:" line
};

Mapping mappingAt(const void *Addr) {
  std::ifstream Smaps("/proc/self/smaps");
  auto A = reinterpret_cast<uintptr_t>(Addr);
  Mapping Found;
  bool In = false;
  for (std::string Line; std::getline(Smaps, Line);) {
    uintptr_t Lo = 0, Hi = 0;
    char Dash = 0;
    std::istringstream S(Line);
    if (S >> std::hex >> Lo >> Dash >> Hi && Dash == '-') {
      In = Lo <= A && A < Hi;
      if (In)
        Found.End = Hi;
      continue;
    }
    if (In && Line.rfind("VmFlags:", 0) == 0)
      Found.VmFlags = Line;
  }
  return Found;
}

TEST(HostPages, ASmallBlockKeepsItsAlignmentAndSmallPages) {
  HostPages P(1000, 256, /*Zero=*/true);
  ASSERT_NE(P.data(), nullptr);
  EXPECT_EQ(P.size(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(P.data()) % 256, 0u);
  EXPECT_FALSE(P.large());
  EXPECT_TRUE(isZero(P));
}

TEST(HostPages, ALargeBlockSitsOnAHugePageAndAsksForHugePages) {
  HostPages P(3 * HostPages::LargeBytes + 5, 64, /*Zero=*/true);
  ASSERT_NE(P.data(), nullptr);
  EXPECT_TRUE(P.large());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(P.data()) % HostPages::LargeBytes, 0u);
  EXPECT_TRUE(isZero(P));
  // The advice is on the mapping ("hg" in its VmFlags) where the kernel
  // has transparent huge pages at all.
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "this kernel has no transparent huge pages to ask for";
  std::string Flags = mappingAt(P.data()).VmFlags;
  ASSERT_NE(Flags, "") << "no VmFlags for the block in /proc/self/smaps";
  EXPECT_NE(Flags.find(" hg"), std::string::npos) << Flags;
}

TEST(HostPages, HugePagesFromSevenEighthsOfOne) {
  EXPECT_FALSE(HostPages(HostPages::LargeFromBytes - 1, 64, false).large());
  // The smallest large block is mapped as a whole huge page: the kernel
  // backs no less with one.
  HostPages Least(HostPages::LargeFromBytes, 64, /*Zero=*/false);
  ASSERT_NE(Least.data(), nullptr);
  EXPECT_TRUE(Least.large());
  Mapping M = mappingAt(Least.data());
  ASSERT_NE(M.End, 0u) << "no mapping holds the block in /proc/self/smaps";
  EXPECT_GE(M.End - reinterpret_cast<uintptr_t>(Least.data()), HostPages::LargeBytes);
  // The peer's half of the bench's fused 4,096,000-byte all_reduce.
  HostPages Half(2048004, 64, /*Zero=*/true);
  ASSERT_NE(Half.data(), nullptr);
  EXPECT_TRUE(Half.large());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Half.data()) % HostPages::LargeBytes, 0u);
  EXPECT_TRUE(isZero(Half));
}

TEST(HostPages, ASizeThatCannotBeRoundedIsNullNotACrash) {
  HostPages P(UINT64_MAX - 3, 64, /*Zero=*/true);
  EXPECT_EQ(P.data(), nullptr);
  EXPECT_EQ(P.size(), UINT64_MAX - 3);
}

TEST(HostPages, AMovedBlockLeavesNothingBehind) {
  HostPages A(4096, 64, /*Zero=*/false);
  char *Data = A.data();
  HostPages B(std::move(A));
  EXPECT_EQ(B.data(), Data);
  EXPECT_EQ(A.data(), nullptr);
  HostPages C;
  C = std::move(B);
  EXPECT_EQ(C.data(), Data);
  EXPECT_EQ(C.size(), 4096u);
}

TEST(SpareScratch, AFreeBlockIsHandedOutAgainForTheSameOrLess) {
  SpareScratch S;
  char *First = S.take(1 << 20)->data();
  ASSERT_NE(First, nullptr);
  EXPECT_EQ(S.take(1 << 20)->data(), First);
  EXPECT_EQ(S.take(100)->data(), First);
  // A larger one is new, and kept instead.
  auto Larger = S.take(2 << 20);
  EXPECT_GE(Larger->size(), uint64_t(2) << 20);
  char *Kept = Larger->data();
  Larger.reset();
  EXPECT_EQ(S.take(1 << 20)->data(), Kept);
}

TEST(SpareScratch, ABlockSomeoneHoldsIsNeverHandedOut) {
  SpareScratch S;
  {
    // A kept block, handed out: no longer free.
    S.take(4096).reset();
    auto Holder = S.take(4096);
    auto Next = S.take(4096);
    EXPECT_NE(Next->data(), Holder->data());
  }
  auto InFlight = S.take(4096);
  auto Second = S.take(4096);
  EXPECT_NE(Second->data(), InFlight->data());
  // As a request abandoned at a timeout holds its scratch
  // (AbandonedMemory.h): the operation ended, the memory did not.
  std::shared_ptr<HostPages> Abandoned = InFlight;
  InFlight.reset();
  Second.reset();
  auto Third = S.take(4096);
  EXPECT_NE(Third->data(), Abandoned->data());
}

TEST(SpareScratch, ABlockAboveMaxKeptIsNotKept) {
  SpareScratch S;
  auto Big = S.take(SpareScratch::MaxKept + 1);
  ASSERT_NE(Big->data(), nullptr);
  Big.reset();
  // Kept, it would be handed out for this.
  EXPECT_LT(S.take(4096)->size(), SpareScratch::MaxKept);
}

TEST(SpareScratch, ABlockMayOutliveTheScratchItCameFrom) {
  // As an abandoned request's scratch outlives its group: the block stays
  // the holder's, whole, after its scratch is gone (memory allocated since
  // does not land on it), and lets go later without touching freed state
  // (ASan's build would name it).
  std::shared_ptr<HostPages> Block;
  {
    SpareScratch S;
    Block = S.take(4096);
    ASSERT_NE(Block->data(), nullptr);
    std::memset(Block->data(), 0x5a, 4096);
  }
  std::vector<std::unique_ptr<HostPages>> Since;
  for (int I = 0; I != 8; ++I) {
    Since.push_back(std::make_unique<HostPages>(4096, 64, /*Zero=*/false));
    ASSERT_NE(Since.back()->data(), nullptr);
    std::memset(Since.back()->data(), 0xa5, 4096);
  }
  EXPECT_GE(Block->size(), 4096u);
  EXPECT_TRUE(std::all_of(Block->data(), Block->data() + 4096, [](char C) { return C == 0x5a; }));
  EXPECT_EQ(Block.use_count(), 1);
  Block.reset();
}

} // namespace
