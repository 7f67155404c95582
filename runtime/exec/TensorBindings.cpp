//===- runtime/exec/TensorBindings.cpp - Plan tensors bound by name --------===//

#include "runtime/exec/TensorBindings.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <tuple>

using namespace llvm;

namespace collc::rt {

TensorBindings::TensorBindings(const plan::Plan &P, int64_t Rank)
    : P(P), Rank(Rank), Home(P.Tensors.size(), nullptr), IsView(P.Tensors.size(), 0),
      Touched(P.Tensors.size(), 0) {
  for (size_t T = 0; T != P.Tensors.size(); ++T)
    ByName[P.Tensors[T].Name] = uint32_t(T);
  for (const plan::Comm &C : P.Comms) {
    const plan::CommSide *S = C.sideOn(Rank); // a joint comm's: this rank's tensors
    if (!S)
      continue;
    for (uint32_t T : S->Inputs)
      Touched[T] = 1;
    for (uint32_t T : S->Outputs)
      Touched[T] = 1;
    if (S->Counts >= 0)
      Touched[S->Counts] = 1;
  }
}

void TensorBindings::setView(uint32_t T, char *Addr) {
  Home[T] = Addr;
  IsView[T] = 1;
}

Expected<uint32_t> TensorBindings::indexOf(StringRef Name) const {
  Name = plan::tensorName(Name);
  auto It = ByName.find(Name);
  if (It == ByName.end())
    return makeError(ErrorKind::InvalidArgument,
                     formatv("plan @{0} has no tensor %{1}", P.Program, Name));
  return It->second;
}

Error TensorBindings::bind(StringRef Given, void *Data, uint64_t Bytes) {
  Expected<uint32_t> T = indexOf(Given);
  if (!T)
    return T.takeError();
  StringRef Name = P.Tensors[*T].Name;
  if (IsView[*T])
    return makeError(ErrorKind::InvalidArgument,
                     formatv("%{0} is a zero-copy view of a plan buffer: write it at "
                             "tensor(\"{0}\") instead of binding it",
                             Name));
  uint64_t Want = P.Tensors[*T].Type.bytes();
  if (Bytes != Want)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("%{0} is {1} ({2} bytes); {3} bytes were bound", Name,
                             P.Tensors[*T].Type.str(), Want, Bytes));
  if (!Data && Want)
    return makeError(ErrorKind::InvalidArgument, formatv("%{0} was bound to null", Name));
  // An empty tensor may be bound to null (an empty vector's data()); a
  // null home means "unbound", so it gets an address that is never read.
  static char EmptyTensor;
  Home[*T] = Data ? static_cast<char *>(Data) : &EmptyTensor;
  return Error::success();
}

Expected<char *> TensorBindings::lookup(StringRef Given) const {
  Expected<uint32_t> T = indexOf(Given);
  if (!T)
    return T.takeError();
  StringRef Name = P.Tensors[*T].Name;
  if (!Home[*T])
    return makeError(ErrorKind::InvalidArgument,
                     formatv("%{0} is not a view of a plan buffer and is not bound", Name));
  return Home[*T];
}

std::vector<std::string> TensorBindings::unbound() const {
  std::vector<std::string> Out;
  for (size_t T = 0; T != P.Tensors.size(); ++T)
    if (Touched[T] && !Home[T])
      Out.push_back(P.Tensors[T].Name);
  return Out;
}

std::vector<uint32_t> TensorBindings::touched() const {
  std::vector<uint32_t> Out;
  for (size_t T = 0; T != P.Tensors.size(); ++T)
    if (Touched[T])
      Out.push_back(uint32_t(T));
  return Out;
}

std::optional<std::pair<uint32_t, uint32_t>> TensorBindings::partialOverlap() const {
  struct Span {
    uintptr_t Begin, End;
    uint32_t Tensor;
  };
  std::vector<Span> Spans;
  for (size_t T = 0; T != P.Tensors.size(); ++T)
    if (Touched[T] && Home[T] && P.Tensors[T].Type.bytes() > 0) {
      uintptr_t Begin = reinterpret_cast<uintptr_t>(Home[T]);
      Spans.push_back({Begin, Begin + uintptr_t(P.Tensors[T].Type.bytes()), uint32_t(T)});
    }
  // By address, then size, then tensor: deterministic for one binding.
  llvm::sort(Spans, [](const Span &A, const Span &B) {
    return std::tie(A.Begin, A.End, A.Tensor) < std::tie(B.Begin, B.End, B.Tensor);
  });
  // The span reaching furthest so far: a span that starts before its end
  // overlaps it, and any earlier span it overlaps (the pairs among those
  // were checked as they came).
  const Span *Reach = nullptr;
  for (const Span &S : Spans) {
    if (Reach && S.Begin < Reach->End && (S.Begin != Reach->Begin || S.End != Reach->End))
      return std::make_pair(Reach->Tensor, S.Tensor);
    if (!Reach || S.End > Reach->End)
      Reach = &S;
  }
  return std::nullopt;
}

Error TensorBindings::checkBindings(StringRef Verb) const {
  std::vector<std::string> Missing = unbound();
  if (Missing.empty()) {
    std::optional<std::pair<uint32_t, uint32_t>> Both = partialOverlap();
    if (!Both)
      return Error::success();
    auto [First, Second] = *Both;
    uint64_t Into = uint64_t(reinterpret_cast<uintptr_t>(Home[Second]) -
                             reinterpret_cast<uintptr_t>(Home[First]));
    return makeError(
        ErrorKind::InvalidArgument,
        formatv("rank {0} cannot {1} plan @{2}: %{3} ({4} bytes) and %{5} ({6} bytes) overlap: "
                "%{5} starts {7} bytes into %{3}; a comm would read one while it writes the "
                "other: expected memory of its own for each, or the same memory for both (in "
                "place)",
                Rank, Verb, P.Program, P.Tensors[First].Name, P.Tensors[First].Type.bytes(),
                P.Tensors[Second].Name, P.Tensors[Second].Type.bytes(), Into));
  }
  constexpr size_t Named = 8;
  std::string List;
  for (size_t I = 0; I != Missing.size() && I != Named; ++I)
    List += (I ? ", %" : "%") + Missing[I];
  if (Missing.size() > Named)
    List += formatv(" and {0} more", Missing.size() - Named).str();
  return makeError(ErrorKind::InvalidArgument,
                   formatv("rank {0} cannot {1} plan @{2}: {3} {4} not bound: {5}", Rank, Verb,
                           P.Program, Missing.size(),
                           Missing.size() == 1 ? "tensor is" : "tensors are", List));
}

} // namespace collc::rt
