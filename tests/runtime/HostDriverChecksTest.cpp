//===- tests/runtime/HostDriverChecksTest.cpp - The host drivers' argument checks -===//
//
// The checks every host driver (local, mpi, gloo) calls: sizes that overflow
// 64 bits are refused rather than wrapped into a small span that would pass.
// The messages of the ordinary refusals are tested per backend by the
// conformance suite.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/HostDriverChecks.h"

#include "gtest/gtest.h"

#include <cstdint>

using namespace collc;
using namespace collc::rt;

namespace {

std::string failure(llvm::Error E) { return E ? llvm::toString(std::move(E)) : ""; }

TEST(HostDriverChecks, ACountThatOverflowsIsRefusedNotWrapped) {
  char Byte = 0;
  HostResource Small{&Byte, 1};
  // 2^62 f32 elements wrap to 0 bytes in 64 bits.
  HostElements E{ElemType::F32, uint64_t(1) << 62};
  EXPECT_NE(failure(checkAllToAll({2, 0}, Small, Small, E, 2)).find("overflow 64 bits"),
            std::string::npos);
  EXPECT_NE(failure(checkPointToPoint({2, 0}, true, Small, E, 1)).find("overflow 64 bits"),
            std::string::npos);
  // The bytes fit; the bytes times the ranks do not (2^63 x 2).
  HostElements Half{ElemType::U8, uint64_t(1) << 63};
  EXPECT_EQ(failure(checkAllGather({2, 0}, Small, Small, Half)),
            "all_gather: 9223372036854775808 elements of 1 bytes, 2 times, overflow 64 bits");
  uint64_t Counts[2] = {~uint64_t(0), 1};
  llvm::Expected<AllToAllVTotals> V = checkAllToAllV({2, 0}, Small, Small, ElemType::U8, Counts,
                                                     Counts);
  ASSERT_FALSE(bool(V));
  EXPECT_EQ(llvm::toString(V.takeError()), "all_to_all_v: the send counts overflow 64 bits");
}

TEST(HostDriverChecks, ABroadcastNamesTheRootAndTheRange) {
  char Bytes[4] = {};
  HostResource R{Bytes, 4};
  HostElements E{ElemType::F32, 1};
  EXPECT_EQ(failure(checkBroadcast({4, 1}, &R, R, E, 9)), "broadcast root 9 is not in 0..3");
  EXPECT_EQ(failure(checkBroadcast({4, 1}, &R, R, E, 0)),
            "rank 1 is not the broadcast root (0); only the root has a source");
  EXPECT_EQ(failure(checkBroadcast({4, 1}, &R, R, E, 1)), "");
}

TEST(HostDriverChecks, ASpanThatIsTooSmallIsNamedByOperationAndSide) {
  // The names are built only when a check fails (checkSpan takes a Twine):
  // each side's still reads in full.
  char Bytes[16] = {};
  HostResource Four{Bytes, 4}, Eight{Bytes, 8}, Sixteen{Bytes, 16}, Null{nullptr, 0};
  HostElements Two{ElemType::F32, 2};
  EXPECT_EQ(failure(checkReduction({2, 0}, false, Four, Eight, Two, ElemType::F32, ReduceOp::Sum, 1.0)),
            "all_reduce source holds 4 bytes; the operation needs 8");
  EXPECT_EQ(failure(checkReduction({2, 0}, false, Eight, Four, Two, ElemType::F32, ReduceOp::Sum, 1.0)),
            "all_reduce destination holds 4 bytes; the operation needs 8");
  EXPECT_EQ(failure(checkReduction({2, 0}, true, Eight, Eight, Two, ElemType::F32, ReduceOp::Sum, 1.0)),
            "reduce_scatter source holds 8 bytes; the operation needs 16");
  EXPECT_EQ(failure(checkReduction({2, 0}, true, Sixteen, Eight, Two, ElemType::F32, ReduceOp::Sum, 1.0)), "");
  EXPECT_EQ(failure(checkAllToAll({2, 0}, Null, Sixteen, Two, 2)),
            "all_to_all source is null but must hold 16 bytes");
  EXPECT_EQ(failure(checkAllGather({2, 0}, Eight, Eight, Two)),
            "all_gather destination holds 8 bytes; the operation needs 16");
}

} // namespace
