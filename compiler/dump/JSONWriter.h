//===- compiler/dump/JSONWriter.h - Streaming JSON output -----*- C++ -*-===//
//
// A streaming JSON writer with the shape of llvm::json::OStream (object,
// array, attribute, value). collc cannot use LLVM 14's JSON.h: with clang 14,
// libstdc++ 12 and C++20 it does not compile (std::vector's constexpr members
// are instantiated on json::Value while it is still incomplete).
//
// Numbers print in their shortest round-trip form; NaN and infinities, which
// JSON cannot spell, print as null. Strings are escaped per RFC 8259.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_DUMP_JSONWRITER_H
#define COLLC_COMPILER_DUMP_JSONWRITER_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace collc {

class JSONWriter {
public:
  /// \p Indent spaces per level; 0 writes everything on one line.
  explicit JSONWriter(llvm::raw_ostream &OS, unsigned Indent = 0) : OS(OS), Indent(Indent) {}

  void objectBegin() { open('{', /*Object=*/true); }
  void objectEnd() { close('}'); }
  void arrayBegin() { open('[', /*Object=*/false); }
  void arrayEnd() { close(']'); }
  void object(llvm::function_ref<void()> Body) {
    objectBegin();
    Body();
    objectEnd();
  }
  void array(llvm::function_ref<void()> Body) {
    arrayBegin();
    Body();
    arrayEnd();
  }

  /// Starts member \p Key of the current object; one value must follow.
  void attributeBegin(llvm::StringRef Key);
  void attributeEnd() {}
  template <typename T> void attribute(llvm::StringRef Key, const T &V) {
    attributeBegin(Key);
    value(V);
  }
  void attributeObject(llvm::StringRef Key, llvm::function_ref<void()> Body) {
    attributeBegin(Key);
    object(Body);
  }
  void attributeArray(llvm::StringRef Key, llvm::function_ref<void()> Body) {
    attributeBegin(Key);
    array(Body);
  }

  void value(bool B) { scalar(B ? "true" : "false"); }
  void value(double D);
  void value(llvm::StringRef S);
  void value(const char *S) { value(llvm::StringRef(S)); }
  void value(const std::string &S) { value(llvm::StringRef(S)); }
  template <typename T>
  std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>> value(T V) {
    beforeValue();
    if constexpr (std::is_signed_v<T>)
      OS << int64_t(V);
    else
      OS << uint64_t(V);
  }

private:
  struct Level {
    bool Object;
    bool Empty = true;
  };
  void open(char C, bool Object);
  void close(char C);
  void beforeValue();
  void scalar(llvm::StringRef Text) {
    beforeValue();
    OS << Text;
  }
  void newline();
  void writeString(llvm::StringRef S);

  llvm::raw_ostream &OS;
  unsigned Indent;
  std::vector<Level> Stack;
  bool AfterKey = false;
};

} // namespace collc

#endif
