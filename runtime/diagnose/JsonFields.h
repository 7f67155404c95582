//===- runtime/diagnose/JsonFields.h - Fields of a hostile JSON dump -*- C++ -*-===//
//
// A dump is input: truncated, of another version, with counts beyond
// reason or fields of the wrong type. parseJson refuses what LLVM's parser
// must not see (it recurses once per nesting level: a file of a million
// '[' would end the process), and JsonFields reads an object's fields,
// each error naming the file, the field's path in it and what was
// expected: "r2.json: events[5].state: expected a string, got 7".
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_JSONFIELDS_H
#define COLLC_RUNTIME_DIAGNOSE_JSONFIELDS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>

namespace collc::diag {

/// The largest dump read (a ring of a million events is about 400 MiB).
constexpr size_t MaxDumpBytes = size_t(1) << 30;
/// The deepest nesting read: dumps nest a handful of levels.
constexpr unsigned MaxJsonDepth = 64;

/// \p Text parsed, or an error naming \p File: too large, nested too
/// deep, or not JSON (with the parser's line and column).
llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef Text, llvm::StringRef File);

/// The fields of object \p O at \p Path ("" for the top) of \p File.
class JsonFields {
public:
  JsonFields(llvm::StringRef File, std::string Path, const llvm::json::Object &O)
      : File(File), Path(std::move(Path)), O(O) {}

  /// A whole number in \p Min..\p Max.
  llvm::Expected<int64_t> integer(llvm::StringRef Key, int64_t Min, int64_t Max) const;
  /// The same, or nullopt where the field is missing or null.
  llvm::Expected<std::optional<int64_t>> optionalInteger(llvm::StringRef Key, int64_t Min,
                                                         int64_t Max) const;
  llvm::Expected<std::string> string(llvm::StringRef Key) const;
  /// The same, or \p Default where the field is missing.
  llvm::Expected<std::string> optionalString(llvm::StringRef Key, llvm::StringRef Default) const;
  llvm::Expected<bool> boolean(llvm::StringRef Key) const;
  llvm::Expected<const llvm::json::Object *> object(llvm::StringRef Key) const;
  /// Null where the field is missing or null.
  llvm::Expected<const llvm::json::Object *> optionalObject(llvm::StringRef Key) const;
  llvm::Expected<const llvm::json::Array *> array(llvm::StringRef Key) const;

  /// The fields of \p Sub, found at \p Step below this object ("events[5]",
  /// "plan").
  JsonFields at(const llvm::Twine &Step, const llvm::json::Object &Sub) const;
  /// "file: path.key: what".
  llvm::Error error(llvm::StringRef Key, const llvm::Twine &What) const;
  std::string pathOf(llvm::StringRef Key) const;
  llvm::StringRef file() const { return File; }
  const llvm::json::Object &object() const { return O; }

private:
  llvm::StringRef File;
  std::string Path;
  const llvm::json::Object &O;
};

/// "7", "a string", "an array" ...: what a value is, for errors.
std::string describeJson(const llvm::json::Value &V);

/// A whole number of \p V in \p Min..\p Max, or why not.
llvm::Expected<int64_t> integerOf(const llvm::json::Value &V, int64_t Min, int64_t Max,
                                  llvm::StringRef File, const llvm::Twine &Path);

} // namespace collc::diag

#endif
