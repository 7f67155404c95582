//===- ir/Types.h - Element types, tensor types, reduce ops -----*- C++ -*-===//
//
// The value vocabulary of collc: what a tensor holds (element type and
// shape) and how a reduction combines elements. Shared by the IR, the plan
// file and the runtime, so it depends on nothing but LLVM ADT.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_TYPES_H
#define COLLC_IR_TYPES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace collc {

/// Element types, generated from ir/ElemTypes.def (add a type there, not
/// here). The order is part of the plan format (digests hash the spelling,
/// not the number), so new types go at the end.
enum class ElemType : uint8_t {
#define COLLC_ELEM_TYPE(Enum, ...) Enum,
#include "ir/ElemTypes.def"
};
constexpr unsigned NumElemTypes = 0
#define COLLC_ELEM_TYPE(...) +1
#include "ir/ElemTypes.def"
    ;

/// The spelling used by the text formats: "f32", "bf16", "f8e4m3", ...
llvm::StringRef elemTypeName(ElemType T);
llvm::Optional<ElemType> parseElemType(llvm::StringRef Name);
/// Size of one element in bytes.
unsigned elemTypeBytes(ElemType T);
bool isFloatType(ElemType T);
/// A comma-separated list of every spelling, for "expected one of" messages.
llvm::StringRef allElemTypeNames();

/// The most elements (and so the largest dimension) a tensor may have:
/// 2^48, so that byte sizes, offsets and sums of a few of them stay far
/// inside int64 for every consumer (plan, executors, drivers).
constexpr int64_t MaxTensorElements = int64_t(1) << 48;

/// Largest world the IR, a plan and a launch accept (the verifier
/// specializes for every rank).
constexpr int64_t MaxWorldSize = int64_t(1) << 20;

/// A dense, row-major tensor type: element type and static shape.
/// A shape of rank 0 is a scalar.
struct TensorType {
  ElemType Elem = ElemType::F32;
  llvm::SmallVector<int64_t, 4> Shape;

  TensorType() = default;
  TensorType(ElemType E, llvm::ArrayRef<int64_t> S) : Elem(E), Shape(S.begin(), S.end()) {}

  /// Saturate at INT64_MAX instead of wrapping; checkTensorSize is the
  /// check that rejects such a type at the input boundary.
  int64_t numElements() const;
  int64_t bytes() const;
  /// "f32[768, 3072]"
  std::string str() const;

  bool operator==(const TensorType &O) const { return Elem == O.Elem && Shape == O.Shape; }
  bool operator!=(const TensorType &O) const { return !(*this == O); }
};

/// Fails when a dimension or the element count of \p T is above
/// MaxTensorElements (or overflows int64); the message names the value and
/// the limit, and the caller names the type and the place.
/// Types from input pass this before anything sizes a buffer from them.
llvm::Error checkTensorSize(const TensorType &T);

/// How a reduction combines the elements of every rank, generated from
/// ir/ReduceOps.def (add an op there, not here).
enum class ReduceOp : uint8_t {
#define COLLC_REDUCE_OP(Enum, ...) Enum,
#include "ir/ReduceOps.def"
};
constexpr unsigned NumReduceOps = 0
#define COLLC_REDUCE_OP(...) +1
#include "ir/ReduceOps.def"
    ;

/// The spelling used by the text formats: "sum", "premul_sum", ...
llvm::StringRef reduceOpName(ReduceOp Op);
llvm::Optional<ReduceOp> parseReduceOp(llvm::StringRef Name);
/// A comma-separated list of every spelling, for "expected one of" messages.
llvm::StringRef allReduceOpNames();
/// Takes a scale, which multiplies every element first (premul_sum).
bool takesScale(ReduceOp Op);

/// How a tensor sits in a bucket buffer (plan-memory decides; the plan file
/// records it): written there by the model (a zero-copy view), copied in
/// before the collective (pack), or copied out after it (unpack).
enum class SlotMode : uint8_t { View, Pack, Unpack };
llvm::StringRef slotModeName(SlotMode M);

/// Formats a double so that parsing it back gives the same bits
/// (shortest round-trip form).
std::string formatExactDouble(double V);

} // namespace collc

#endif // COLLC_IR_TYPES_H
