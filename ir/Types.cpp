//===- ir/Types.cpp - Element types, tensor types, reduce ops -------------===//

#include "ir/Types.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>

using namespace llvm;

namespace collc {

namespace {
struct ElemTypeInfo {
  const char *Name;
  unsigned Bytes;
  bool IsFloat;
};
// Indexed by ElemType.
constexpr ElemTypeInfo ElemTypeTable[NumElemTypes] = {
    {"f32", 4, true},  {"f16", 2, true},  {"bf16", 2, true},   {"f64", 8, true},
    {"i8", 1, false},  {"u8", 1, false},  {"i32", 4, false},   {"u32", 4, false},
    {"i64", 8, false}, {"u64", 8, false}, {"f8e4m3", 1, true}, {"f8e5m2", 1, true},
};
} // namespace

StringRef elemTypeName(ElemType T) { return ElemTypeTable[unsigned(T)].Name; }
unsigned elemTypeBytes(ElemType T) { return ElemTypeTable[unsigned(T)].Bytes; }
bool isFloatType(ElemType T) { return ElemTypeTable[unsigned(T)].IsFloat; }

Optional<ElemType> parseElemType(StringRef Name) {
  for (unsigned I = 0; I != NumElemTypes; ++I)
    if (Name == ElemTypeTable[I].Name)
      return ElemType(I);
  return None;
}

StringRef allElemTypeNames() {
  return "f32, f16, bf16, f64, i8, u8, i32, u32, i64, u64, f8e4m3, f8e5m2";
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

StringRef reduceOpName(ReduceOp Op) {
  switch (Op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Prod:
    return "prod";
  case ReduceOp::Min:
    return "min";
  case ReduceOp::Max:
    return "max";
  case ReduceOp::Avg:
    return "avg";
  case ReduceOp::PremulSum:
    return "premul_sum";
  }
  llvm_unreachable("bad reduce op");
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

Optional<ReduceOp> parseReduceOp(StringRef Name) {
  return StringSwitch<Optional<ReduceOp>>(Name)
      .Case("sum", ReduceOp::Sum)
      .Case("prod", ReduceOp::Prod)
      .Case("min", ReduceOp::Min)
      .Case("max", ReduceOp::Max)
      .Case("avg", ReduceOp::Avg)
      .Case("premul_sum", ReduceOp::PremulSum)
      .Default(None);
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
