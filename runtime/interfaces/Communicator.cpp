//===- runtime/interfaces/Communicator.cpp - Eager collectives -------------===//

#include "runtime/interfaces/Communicator.h"

#include "llvm/Support/FormatVariadic.h"


#include <cstring>
#include <vector>

using namespace llvm;

namespace collc::rt {

Communicator::~Communicator() = default;

Error Communicator::sumScatter(ElemType T, ArrayRef<uint8_t> In, MutableArrayRef<uint8_t> Out) {
  if (In.size() != Out.size() * size())
    return makeError(ErrorKind::InvalidArgument,
                     formatv("sum_scatter input holds {0} bytes; {1} ranks x {2} output bytes "
                             "need {3}",
                             In.size(), size(), Out.size(), Out.size() * size()));
  std::vector<uint8_t> Copy(In.begin(), In.end());
  if (Error E = allReduce(ReduceOp::Sum, T, Copy))
    return E;
  if (!Out.empty())
    std::memcpy(Out.data(), Copy.data() + rank() * Out.size(), Out.size());
  return Error::success();
}

Error Communicator::health() const { return Error::success(); }

Expected<std::shared_ptr<Communicator>> Communicator::split(int, int) {
  return makeError(ErrorKind::Unsupported, "this communicator cannot split");
}

} // namespace collc::rt
