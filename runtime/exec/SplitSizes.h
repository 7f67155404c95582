//===- runtime/exec/SplitSizes.h - all_to_all_v split sizes -------*- C++ -*-===//
//
// The split sizes of an all_to_all_v are rows of dimension 0, one per
// (sender, receiver) pair of the group: static in the plan, or read at run
// time from a counts tensor and shared with every rank. Every backend reads
// and checks them here, so that all ranks refuse the same matrix with the
// same message, naming the rank at fault: a negative entry, a sender whose
// rows exceed its input, a receiver whose rows exceed its capacity. Sums use
// checked arithmetic: the entries are input.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_SPLITSIZES_H
#define COLLC_RUNTIME_EXEC_SPLITSIZES_H

#include "ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace collc::rt {

/// Element \p Index of a split-size tensor of type \p T at \p Data. Fails
/// on a type that is not an integer, or a u64 beyond int64.
llvm::Expected<int64_t> readSplitSize(ElemType T, const char *Data, uint64_t Index);

/// This rank's rows: Send[r] rows go to group rank r, Recv[r] come from it.
struct SplitRows {
  std::vector<uint64_t> Send, Recv;
};

/// Checks \p Matrix (N x N, row-major [sender][receiver]) of comm
/// \p CommIndex against every rank's \p InRows and \p OutRows, and returns
/// the rows of group rank \p Local.
llvm::Expected<SplitRows> checkSplitMatrix(uint32_t CommIndex, llvm::ArrayRef<int64_t> Matrix,
                                           int64_t N, int64_t Local, int64_t InRows,
                                           int64_t OutRows);

} // namespace collc::rt

#endif
