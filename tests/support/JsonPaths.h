//===- tests/support/JsonPaths.h - A JSON file's values by path -*- C++ -*-===//
//
// The tests that read a dump (a flight record) see it through this: each
// value by its JSON pointer ("/error/kind", "/events/5/state"), so that they
// include no LLVM JSON header. LLVM 14's JSON.h does not compile as C++20
// under clang (the sanitizer builds): only JsonPaths.cpp includes it, built
// as C++17 there (collc_llvm_json_sources).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_SUPPORT_JSONPATHS_H
#define COLLC_TESTS_SUPPORT_JSONPATHS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>

namespace collc::test {

class JsonPaths {
public:
  /// Reads and parses \p File; the error names the file and what is wrong.
  static llvm::Expected<JsonPaths> read(llvm::StringRef File);

  /// Whether \p Path names a value (of any kind).
  bool has(llvm::StringRef Path) const { return Values.count(Path.str()) != 0; }
  /// The string at \p Path, or "<no PATH>" when there is none.
  std::string str(llvm::StringRef Path) const;
  /// The integer at \p Path, or INT64_MIN when there is none.
  int64_t num(llvm::StringRef Path) const;
  /// The number of elements of the array at \p Path, or -1.
  int64_t size(llvm::StringRef Path) const;

private:
  enum class Kind { String, Integer, Array, Other };
  struct Entry {
    Kind K = Kind::Other;
    std::string Text;
    int64_t Number = 0;
  };
  std::map<std::string, Entry> Values;
  friend class JsonPathsBuilder;
};

} // namespace collc::test

#endif
