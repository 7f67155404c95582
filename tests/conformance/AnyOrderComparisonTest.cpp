//===- tests/conformance/AnyOrderComparisonTest.cpp - The suite's bound ----===//
//
// The suite's comparison of reductions, on the suite's own inputs, against a
// backend that sums in the reverse of rank order: a harness that declares
// `RankOrderedReductions = false` accepts it, the local one (bit-exact)
// does not.
//
//===----------------------------------------------------------------------===//

#include "tests/conformance/ConformanceSuite.h"

namespace collc::test {
namespace {

using LocalHarness = DriverHarness<rt::local::LocalDriver>;
struct ReorderingHarness : LocalHarness {
  static constexpr bool RankOrderedReductions = false;
};

TEST(AnyOrderComparison, TheTraitSelectsTheMode) {
  EXPECT_TRUE(reductionOrderOf<LocalHarness>().RankOrdered);
  EXPECT_FALSE(reductionOrderOf<ReorderingHarness>().RankOrdered);
  EXPECT_TRUE(reductionOrderOf<ReorderingHarness>().NarrowInF32);
}

/// Rank \p R's input of type \p T: the suite's for f64 and fp8; for f32,
/// f16 and bf16 full mantissas over twenty binades (the suite's values are
/// short enough that f32 sums them exactly, in any order).
std::vector<char> orderSensitiveInput(ElemType T, int R, uint64_t Count) {
  if (T == ElemType::F64 || elemTypeBytes(T) == 1)
    return conformanceInput(T, R, /*Salt=*/7, Count);
  unsigned Size = elemTypeBytes(T);
  std::vector<char> V(Count * Size);
  for (uint64_t I = 0; I != Count; ++I) {
    uint64_t H = mix(uint64_t(R) * 1000003 + I);
    float F = std::ldexp(1.0f + float(H & 0xffffff) / 16777216.0f, int((H >> 24) % 21) - 10);
    F = (H >> 50) & 1 ? -F : F;
    uint16_t N = T == ElemType::F16 ? rt::floatToHalf(F) : rt::floatToBf16(F);
    if (T == ElemType::F32)
      std::memcpy(V.data() + I * 4, &F, 4);
    else
      std::memcpy(V.data() + I * 2, &N, 2);
  }
  return V;
}

/// Every float type and reduce op over 4 and 8 ranks: the reverse-order
/// result passes in any-order mode; where it differs from the reference
/// (f32 and f64 sums do, on these inputs), exact mode fails.
TEST(AnyOrderComparison, AReverseOrderReductionPassesOnlyInAnyOrderMode) {
  const uint64_t Count = 4099;
  for (int World : {4, 8})
    for (ElemType T : allElemTypes()) {
      if (!isFloatType(T))
        continue;
      unsigned Size = elemTypeBytes(T);
      std::vector<std::vector<char>> In;
      for (int R = 0; R != World; ++R)
        In.push_back(orderSensitiveInput(T, R, Count));
      std::vector<const char *> Srcs, Reversed;
      for (const auto &V : In)
        Srcs.push_back(V.data());
      Reversed.assign(Srcs.rbegin(), Srcs.rend());
      for (auto [RO, Scale] : {std::pair{ReduceOp::Sum, 1.0},
                               {ReduceOp::Avg, 1.0},
                               {ReduceOp::PremulSum, 0.3},
                               {ReduceOp::Prod, 1.0},
                               {ReduceOp::Min, 1.0},
                               {ReduceOp::Max, 1.0}}) {
        std::vector<char> Want(Count * Size), Got(Count * Size);
        for (uint64_t I = 0; I != Count; ++I) {
          rt::referenceReduce(T, RO, Scale, Srcs.data(), World, I, Want.data() + I * Size);
          rt::referenceReduce(T, RO, Scale, Reversed.data(), World, I, Got.data() + I * Size);
        }
        rt::ReductionSources Red{T, RO, Scale, Srcs.data(), unsigned(World), 0};
        std::string What =
            llvm::formatv("{0} {1} over {2} ranks", reduceOpName(RO), elemTypeName(T), World).str();
        EXPECT_EQ(compareResult(T, Got, 0, Want, &Red, reductionOrderOf<ReorderingHarness>()), "")
            << What;
        std::string Exact = compareResult(T, Got, 0, Want, &Red, reductionOrderOf<LocalHarness>());
        if (RO == ReduceOp::Sum && Size >= 4) { // narrow sums round the f32 sum once: rarely visible
          EXPECT_NE(Exact, "") << What << ": the reverse order should be visible";
        }
        if (Got != Want) {
          EXPECT_NE(Exact.find("allowed bit-exact"), std::string::npos) << What << ": " << Exact;
        }
      }
    }
}

} // namespace
} // namespace collc::test
