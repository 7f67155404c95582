//===- runtime/interfaces/HostEagerComm.cpp - EagerComm over any host driver ---===//

#include "runtime/interfaces/HostEagerComm.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt {

Expected<uint64_t> eagerBytes(StringRef What, ElemType T, uint64_t Count, uint64_t Ranks) {
  // The compiler's overflow check (as HostDriverChecks.cpp's spans): this
  // runs on every issue.
  uint64_t Bytes;
  if (__builtin_mul_overflow(Count, uint64_t(elemTypeBytes(T)), &Bytes) ||
      __builtin_mul_overflow(Bytes, Ranks, &Bytes))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("{0}: {1} elements of {2} x {3} ranks overflow 64 bits", What, Count,
                             elemTypeName(T), Ranks));
  return Bytes;
}

Expected<uint64_t> eagerTotalBytes(StringRef What, ElemType T, ArrayRef<uint64_t> Counts) {
  uint64_t Total = 0;
  for (uint64_t C : Counts) {
    Expected<uint64_t> Bytes = eagerBytes(What, T, C);
    if (!Bytes)
      return Bytes.takeError();
    if (__builtin_add_overflow(Total, *Bytes, &Total))
      return makeError(ErrorKind::InvalidArgument,
                       formatv("{0}: the counts' total bytes overflow 64 bits", What));
  }
  return Total;
}

Error eagerStillPending(EagerTicket T, std::chrono::milliseconds Within) {
  return makeError(ErrorKind::Timeout,
                   formatv("operation {0} of stream {1} is still running after {2} ms (it goes "
                           "on: wait again)",
                           T.Value, T.Stream, Within.count()));
}

} // namespace collc::rt
