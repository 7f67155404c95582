//===- api/StructVersions.h - The versions of collc.h's structs --*- C++ -*-===//
//
// collc.h's option and result structs grow at their end; their first field
// `size` is sizeof the struct the caller was compiled with. This is the one
// place that knows where each struct's version 1 ends, and the one code that
// fills, reads and writes a caller's struct by its size:
//  - the `size` a call accepts is at least version 1's (Args::versioned);
//  - the Init symbols of version 1 (plain functions taking a pointer, which
//    binaries built before the sized Init still call) fill version 1 only;
//    the sized Init fills the size it is given (initVersioned);
//  - a struct is read over the defaults, as far as its size goes
//    (readVersioned), and written no further than its size.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_API_STRUCTVERSIONS_H
#define COLLC_API_STRUCTVERSIONS_H

#include "api/ApiError.h"

#include "collc/collc.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace collc::api {

/// Where version 1 of a struct ends: the offset of the first field a later
/// version added, or the end of the last field while no version added any.
/// Never sizeof(T) of a struct that may grow: the Init symbol of version 1
/// writes exactly this many bytes.
template <class T> inline constexpr size_t FirstVersionSize = 0;
template <>
inline constexpr size_t FirstVersionSize<collcCompileOptions_t> =
    offsetof(collcCompileOptions_t, memoryBudget);
template <>
inline constexpr size_t FirstVersionSize<collcDumpOptions_t> =
    offsetof(collcDumpOptions_t, focusSteps) + sizeof(const char *);
template <>
inline constexpr size_t FirstVersionSize<collcSimResult_t> =
    offsetof(collcSimResult_t, peakMemoryBytes);
template <>
inline constexpr size_t FirstVersionSize<collcExecutorOptions_t> =
    offsetof(collcExecutorOptions_t, device);
template <>
inline constexpr size_t FirstVersionSize<collcCommOptions_t> =
    offsetof(collcCommOptions_t, timeoutMs) + sizeof(int64_t);
template <>
inline constexpr size_t FirstVersionSize<collcStore_t> =
    offsetof(collcStore_t, oneHost) + sizeof(int);

/// Whether \p Size ends a version of T: version 1's end or this library's
/// (the only versions there are), or beyond (a caller built against a newer
/// collc.h). A size between two versions ends in the middle of a field.
template <class T> constexpr bool endsAVersion(size_t Size) {
  return Size == FirstVersionSize<T> || Size >= sizeof(T);
}

/// The name of each struct and of its initializer macro, for refusals.
template <class T> struct StructNames;
template <> struct StructNames<collcCompileOptions_t> {
  static constexpr const char *Type = "collcCompileOptions_t",
                              *Macro = "COLLC_COMPILE_OPTIONS_INIT";
};
template <> struct StructNames<collcDumpOptions_t> {
  static constexpr const char *Type = "collcDumpOptions_t", *Macro = "COLLC_DUMP_OPTIONS_INIT";
};
template <> struct StructNames<collcSimResult_t> {
  static constexpr const char *Type = "collcSimResult_t", *Macro = "COLLC_SIM_RESULT_INIT";
};
template <> struct StructNames<collcExecutorOptions_t> {
  static constexpr const char *Type = "collcExecutorOptions_t",
                              *Macro = "COLLC_EXECUTOR_OPTIONS_INIT";
};
template <> struct StructNames<collcCommOptions_t> {
  static constexpr const char *Type = "collcCommOptions_t", *Macro = "COLLC_COMM_OPTIONS_INIT";
};

/// An Init: the first \p Size bytes of \p Defaults (its `size` set to
/// \p Size) into *\p S, \p Name the argument. \p Size is sizeof the caller's
/// struct: from version 1's to this library's, else nothing is written (a
/// caller of a newer collc.h has fields whose defaults this library does not
/// know).
template <class T>
llvm::Error initVersioned(T *S, size_t Size, const T &Defaults, const char *Name) {
  if (!S)
    return makeApiError(collcInvalidArgument, llvm::formatv("{0} is NULL: expected a {1}", Name,
                                                            StructNames<T>::Type));
  constexpr size_t First = FirstVersionSize<T>;
  static_assert(First > sizeof(size_t) && First <= sizeof(T), "a version 1 for every struct");
  if (!endsAVersion<T>(Size) || Size > sizeof(T))
    return makeApiError(
        collcInvalidArgument,
        llvm::formatv("size is {0}: expected sizeof the caller's {1}, {2} (version 1) or {3} "
                      "(this library's collc.h){4}",
                      Size, StructNames<T>::Type, First, sizeof(T),
                      Size > sizeof(T) ? llvm::formatv("; a caller built against a newer collc.h "
                                                       "initializes it with {0}",
                                                       StructNames<T>::Macro)
                                             .str()
                                       : std::string()));
  T D = Defaults;
  D.size = Size;
  std::memcpy(static_cast<void *>(S), &D, Size);
  return llvm::Error::success();
}

/// A struct a caller filled, over \p Defaults: the fields its `size` covers
/// (checked by Args::versioned; a caller built against an older collc.h has
/// fewer, a newer one's are not read). The result's size is this library's.
template <class T> T readVersioned(const T *S, const T &Defaults) {
  T O = Defaults;
  if (S)
    std::memcpy(static_cast<void *>(&O), S, std::min(S->size, sizeof O));
  O.size = sizeof O;
  return O;
}

/// Writes \p Value into the caller's *\p S up to S->size, which stays.
template <class T> void writeVersioned(T *S, T Value) {
  Value.size = S->size;
  std::memcpy(static_cast<void *>(S), &Value, std::min(S->size, sizeof Value));
}

} // namespace collc::api

#endif
