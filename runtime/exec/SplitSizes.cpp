//===- runtime/exec/SplitSizes.cpp - all_to_all_v split sizes --------------===//

#include "runtime/exec/SplitSizes.h"

#include "runtime/exec/ElementTraits.h"
#include "runtime/exec/RuntimeError.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cstring>
#include <limits>
#include <type_traits>

using namespace llvm;

namespace collc::rt {

Expected<int64_t> readSplitSize(ElemType T, const char *Data, uint64_t Index) {
  return visitElemType(T, [&](auto E) -> Expected<int64_t> {
    using Traits = decltype(E);
    using S = typename Traits::Storage;
    if constexpr (Traits::IsFloat) {
      return makeError(
          ErrorKind::InvalidArgument,
          formatv("split sizes of type {0}: expected an integer type", elemTypeName(T)));
    } else {
      S V;
      std::memcpy(&V, Data + Index * sizeof(S), sizeof(S));
      if constexpr (std::is_unsigned_v<S>)
        if (uint64_t(V) > uint64_t(std::numeric_limits<int64_t>::max()))
          return makeError(ErrorKind::InvalidArgument,
                           formatv("split size {0} (entry {1}) is beyond the largest row count, "
                                   "2^63-1",
                                   uint64_t(V), Index));
      return int64_t(V);
    }
  });
}

Expected<SplitRows> checkSplitMatrix(uint32_t CommIndex, ArrayRef<int64_t> Matrix, int64_t N,
                                     int64_t Local, int64_t InRows, int64_t OutRows) {
  if (N <= 0 || Local < 0 || Local >= N || int64_t(Matrix.size()) != N * N)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("all_to_all_v comm #{0}: {1} split sizes for rank {2} of a group of "
                             "{3}; expected {3} x {3}",
                             CommIndex, Matrix.size(), Local, N));
  auto At = [&](int64_t From, int64_t To) { return Matrix[From * N + To]; };
  for (int64_t From = 0; From != N; ++From) {
    int64_t Sent = 0, Received = 0;
    for (int64_t To = 0; To != N; ++To) {
      if (At(From, To) < 0)
        return makeError(ErrorKind::InvalidArgument,
                         formatv("all_to_all_v comm #{0}: rank {1} of the group would send {2} "
                                 "rows to rank {3}",
                                 CommIndex, From, At(From, To), To),
                         From);
      Optional<int64_t> S = checkedAdd(Sent, At(From, To));
      Optional<int64_t> R = checkedAdd(Received, At(To, From));
      // An overflow is past any capacity: report it as the excess it is.
      Sent = S ? *S : std::numeric_limits<int64_t>::max();
      Received = R ? *R : std::numeric_limits<int64_t>::max();
    }
    if (Sent > InRows || Received > OutRows)
      return makeError(ErrorKind::InvalidArgument,
                       formatv("all_to_all_v comm #{0}: rank {1} of the group {2} {3} rows, more "
                               "than its {4} of {5}",
                               CommIndex, From, Sent > InRows ? "sends" : "receives",
                               Sent > InRows ? Sent : Received,
                               Sent > InRows ? "input" : "capacity",
                               Sent > InRows ? InRows : OutRows),
                       From);
  }
  SplitRows Rows;
  for (int64_t J = 0; J != N; ++J) {
    Rows.Send.push_back(uint64_t(At(Local, J)));
    Rows.Recv.push_back(uint64_t(At(J, Local)));
  }
  return Rows;
}

} // namespace collc::rt
