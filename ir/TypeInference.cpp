//===- ir/TypeInference.cpp - Result types of collectives -----------------===//

#include "ir/TypeInference.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

bool hasInferredResultTypes(OpKind K) {
  switch (K) {
  case OpKind::AllReduce:
  case OpKind::AllGather:
  case OpKind::ReduceScatter:
  case OpKind::Broadcast:
  case OpKind::AllToAll:
    return true;
  default:
    return false;
  }
}

static Error typeError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg.str());
}

Expected<TensorType> inferResultType(const Program &P, const Op &O, unsigned Index) {
  assert(hasInferredResultTypes(O.Kind) && "result type is written, not inferred");
  if (Index >= O.Operands.size())
    return typeError(formatv("{0} has {1} operands but {2} results; each operand has one result",
                             opKindName(O.Kind), O.Operands.size(), O.Results.size()));
  const TensorType &In = P.value(O.Operands[Index]).Type;
  switch (O.Kind) {
  case OpKind::AllReduce:
  case OpKind::Broadcast:
    return In;
  default:
    break;
  }
  const Group &G = P.group(O.Group);
  int64_t N = G.uniformSize();
  if (N < 0)
    return typeError(formatv("{0} needs a group whose subgroups have one size; @{1} has "
                             "subgroups of different sizes",
                             opKindName(O.Kind), G.Name));
  StringRef Name = P.value(O.Operands[Index]).Name;
  switch (O.Kind) {
  case OpKind::AllGather: {
    // Gathers of gathers multiply: keep the result within the limit every
    // tensor has, instead of wrapping (a chain once came out as f32[0]).
    if (In.numElements() > MaxTensorElements / N)
      return typeError(formatv("all_gather of %{0} ({1}) over the {2} ranks of @{3} would hold "
                               "{1} x {2} elements, more than 2^48",
                               Name, In.str(), N, G.Name));
    TensorType Out = In;
    if (Out.Shape.empty()) {
      Out.Shape.push_back(N);
    } else {
      Optional<int64_t> D0 = checkedMul(In.Shape[0], N);
      if (!D0)
        return typeError(formatv("all_gather of %{0} : {1} in @{2} ({3} ranks) has a dimension 0 "
                                 "of {4} x {3}, which overflows int64; the limit is 2^48 ({5})",
                                 Name, In.str(), G.Name, N, In.Shape[0], MaxTensorElements));
      Out.Shape[0] = *D0;
    }
    if (Error Err = checkTensorSize(Out))
      return typeError(formatv("all_gather of %{0} : {1} in @{2} gives {3}: {4}", Name, In.str(),
                               G.Name, Out.str(), toString(std::move(Err))));
    return Out;
  }
  case OpKind::ReduceScatter:
  case OpKind::AllToAll: {
    if (In.Shape.empty())
      return typeError(formatv("{0} needs an operand of rank 1 or more; %{1} is a scalar",
                               opKindName(O.Kind), Name));
    if (In.Shape[0] % N != 0)
      return typeError(formatv("{0}: dimension 0 of %{1} ({2}) is not divisible by the size "
                               "{3} of @{4}",
                               opKindName(O.Kind), Name, In.Shape[0], N, G.Name));
    TensorType Out = In;
    if (O.Kind == OpKind::ReduceScatter)
      Out.Shape[0] /= N;
    return Out;
  }
  default:
    llvm_unreachable("handled above");
  }
}

} // namespace collc
