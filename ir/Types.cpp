//===- ir/Types.cpp - Element types, tensor types, reduce ops -------------===//

#include "ir/Types.h"

#include "ir/NamedRows.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <iterator>

using namespace llvm;

namespace collc {

namespace {
struct ElemTypeInfo {
  const char *Name;
  unsigned Bytes;
  bool IsFloat;
};
// One row per type, generated from ir/ElemTypes.def in the enum's order, so
// a type's row is at its enumerator's index.
constexpr ElemTypeInfo ElemTypeTable[] = {
#define COLLC_INT_TYPE(Enum, Spelling, Storage, Nccl, Mpi) {Spelling, sizeof(Storage), false},
#define COLLC_FLOAT_TYPE(Enum, Spelling, Storage, Nccl, Mpi, Digits, MinSubnormal, MaxFinite)      \
  {Spelling, sizeof(Storage), true},
#include "ir/ElemTypes.def"
};
static_assert(std::size(ElemTypeTable) == NumElemTypes, "one row per type");

struct ReduceOpInfo {
  const char *Name;
  bool Scaled;
};
constexpr ReduceOpInfo ReduceOpTable[] = {
#define COLLC_PLAIN_REDUCE(Enum, Spelling, Combine, Mpi, Nccl) {Spelling, false},
#define COLLC_SCALED_REDUCE(Enum, Spelling, Combine, Mpi) {Spelling, true},
#include "ir/ReduceOps.def"
};
static_assert(std::size(ReduceOpTable) == NumReduceOps, "one row per op");

/// "a, b, c": the names of a table's rows, for "expected one of" messages.
template <typename Row, size_t N> std::string joinNames(const Row (&Table)[N]) {
  std::string S;
  for (const Row &R : Table)
    S += std::string(S.empty() ? "" : ", ") + R.Name;
  return S;
}
} // namespace

StringRef elemTypeName(ElemType T) { return ElemTypeTable[unsigned(T)].Name; }
unsigned elemTypeBytes(ElemType T) { return ElemTypeTable[unsigned(T)].Bytes; }
bool isFloatType(ElemType T) { return ElemTypeTable[unsigned(T)].IsFloat; }

Optional<ElemType> parseElemType(StringRef Name) {
  return enumNamed<ElemType>(ElemTypeTable, Name);
}

StringRef allElemTypeNames() {
  static const std::string Names = joinNames(ElemTypeTable);
  return Names;
}

StringRef reduceOpName(ReduceOp Op) { return ReduceOpTable[unsigned(Op)].Name; }
bool takesScale(ReduceOp Op) { return ReduceOpTable[unsigned(Op)].Scaled; }

Optional<ReduceOp> parseReduceOp(StringRef Name) {
  return enumNamed<ReduceOp>(ReduceOpTable, Name);
}

StringRef allReduceOpNames() {
  static const std::string Names = joinNames(ReduceOpTable);
  return Names;
}

int64_t TensorType::numElements() const {
  int64_t N = 1;
  for (int64_t D : Shape) {
    Optional<int64_t> Next = checkedMul(N, D);
    if (!Next)
      return INT64_MAX;
    N = *Next;
  }
  return N;
}

int64_t TensorType::bytes() const {
  return checkedMul(numElements(), int64_t(elemTypeBytes(Elem))).getValueOr(INT64_MAX);
}

Error checkTensorSize(const TensorType &T) {
  auto Fail = [&](const Twine &Msg) {
    return createStringError(inconvertibleErrorCode(), Msg.str());
  };
  bool HasZero = false;
  for (size_t I = 0; I != T.Shape.size(); ++I) {
    int64_t D = T.Shape[I];
    if (D < 0)
      return Fail(formatv("dimension {0} is {1}; sizes must be non-negative", I, D));
    if (D > MaxTensorElements)
      return Fail(formatv("dimension {0} is {1}, more than the limit 2^48 ({2})", I, D,
                          MaxTensorElements));
    HasZero |= D == 0;
  }
  if (HasZero)
    return Error::success();
  int64_t N = 1;
  for (size_t I = 0; I != T.Shape.size(); ++I) {
    Optional<int64_t> Next = checkedMul(N, T.Shape[I]);
    if (!Next)
      return Fail(formatv("the element count overflows int64 (dimensions 0..{0} multiply past "
                          "{1}); the limit is 2^48 ({2})",
                          I, INT64_MAX, MaxTensorElements));
    N = *Next;
  }
  if (N > MaxTensorElements)
    return Fail(formatv("{0} elements, more than the limit 2^48 ({1})", N, MaxTensorElements));
  return Error::success();
}

std::string TensorType::str() const {
  std::string S;
  raw_string_ostream OS(S);
  OS << elemTypeName(Elem) << '[';
  for (size_t I = 0; I != Shape.size(); ++I)
    OS << (I ? ", " : "") << Shape[I];
  OS << ']';
  return S;
}

StringRef slotModeName(SlotMode M) {
  switch (M) {
  case SlotMode::View:
    return "view";
  case SlotMode::Pack:
    return "pack";
  case SlotMode::Unpack:
    return "unpack";
  }
  llvm_unreachable("bad slot mode");
}

std::string formatExactDouble(double V) {
  char Buf[64];
  auto R = std::to_chars(Buf, Buf + sizeof(Buf), V);
  std::string S(Buf, R.ptr);
  // Keep a marker that this is a real number so "1" prints as "1.0".
  if (S.find_first_of(".eEn") == std::string::npos)
    S += ".0";
  return S;
}

} // namespace collc
