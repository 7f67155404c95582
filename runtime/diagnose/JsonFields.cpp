//===- runtime/diagnose/JsonFields.cpp - Fields of a hostile JSON dump -----===//

#include "runtime/diagnose/JsonFields.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace llvm;

namespace collc::diag {

static Error fileError(StringRef File, const Twine &What) {
  return createStringError(inconvertibleErrorCode(), (File + ": " + What).str());
}

/// The deepest nesting of \p Text's arrays and objects, outside strings,
/// and where it first passes \p Limit (a byte offset), if it does.
static std::optional<size_t> tooDeepAt(StringRef Text, unsigned Limit) {
  unsigned Depth = 0;
  bool InString = false, Escaped = false;
  for (size_t I = 0; I != Text.size(); ++I) {
    char C = Text[I];
    if (InString) {
      if (Escaped)
        Escaped = false;
      else if (C == '\\')
        Escaped = true;
      else if (C == '"')
        InString = false;
      continue;
    }
    if (C == '"')
      InString = true;
    else if ((C == '[' || C == '{') && ++Depth > Limit)
      return I;
    else if ((C == ']' || C == '}') && Depth)
      --Depth;
  }
  return std::nullopt;
}

Expected<json::Value> parseJson(StringRef Text, StringRef File) {
  if (Text.size() > MaxDumpBytes)
    return fileError(File, formatv("{0} bytes: more than the {1} a dump may have", Text.size(),
                                   MaxDumpBytes));
  if (std::optional<size_t> At = tooDeepAt(Text, MaxJsonDepth))
    return fileError(File, formatv("byte {0}: nested more than {1} deep (a dump nests a few "
                                   "levels)",
                                   *At, MaxJsonDepth));
  Expected<json::Value> V = json::parse(Text);
  if (!V)
    return fileError(File, "not JSON: " + toString(V.takeError()));
  return V;
}

std::string describeJson(const json::Value &V) {
  switch (V.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return *V.getAsBoolean() ? "true" : "false";
  case json::Value::Number: {
    std::string S;
    raw_string_ostream OS(S);
    OS << V;
    return OS.str();
  }
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

Expected<int64_t> integerOf(const json::Value &V, int64_t Min, int64_t Max, StringRef File,
                            const Twine &Path) {
  std::optional<int64_t> N;
  if (Optional<int64_t> I = V.getAsInteger())
    N = *I;
  if (!N || *N < Min || *N > Max)
    return fileError(File, formatv("{0}: expected a whole number in {1}..{2}, got {3}", Path.str(),
                                   Min, Max, describeJson(V)));
  return *N;
}

std::string JsonFields::pathOf(StringRef Key) const {
  return Path.empty() ? Key.str() : Path + "." + Key.str();
}

Error JsonFields::error(StringRef Key, const Twine &What) const {
  return fileError(File, pathOf(Key) + ": " + What);
}

JsonFields JsonFields::at(const Twine &Step, const json::Object &Sub) const {
  return JsonFields(File, Path.empty() ? Step.str() : Path + "." + Step.str(), Sub);
}

Expected<int64_t> JsonFields::integer(StringRef Key, int64_t Min, int64_t Max) const {
  const json::Value *V = O.get(Key);
  if (!V)
    return error(Key, "missing");
  return integerOf(*V, Min, Max, File, pathOf(Key));
}

Expected<std::optional<int64_t>> JsonFields::optionalInteger(StringRef Key, int64_t Min,
                                                             int64_t Max) const {
  const json::Value *V = O.get(Key);
  if (!V || V->kind() == json::Value::Null)
    return std::optional<int64_t>();
  Expected<int64_t> N = integerOf(*V, Min, Max, File, pathOf(Key));
  if (!N)
    return N.takeError();
  return std::optional<int64_t>(*N);
}

Expected<std::string> JsonFields::string(StringRef Key) const {
  const json::Value *V = O.get(Key);
  if (!V)
    return error(Key, "missing");
  if (Optional<StringRef> S = V->getAsString())
    return S->str();
  return error(Key, "expected a string, got " + describeJson(*V));
}

Expected<std::string> JsonFields::optionalString(StringRef Key, StringRef Default) const {
  if (!O.get(Key))
    return Default.str();
  return string(Key);
}

Expected<bool> JsonFields::boolean(StringRef Key) const {
  const json::Value *V = O.get(Key);
  if (!V)
    return error(Key, "missing");
  if (Optional<bool> B = V->getAsBoolean())
    return *B;
  return error(Key, "expected true or false, got " + describeJson(*V));
}

Expected<const json::Object *> JsonFields::object(StringRef Key) const {
  const json::Value *V = O.get(Key);
  if (!V)
    return error(Key, "missing");
  if (const json::Object *Sub = V->getAsObject())
    return Sub;
  return error(Key, "expected an object, got " + describeJson(*V));
}

Expected<const json::Object *> JsonFields::optionalObject(StringRef Key) const {
  const json::Value *V = O.get(Key);
  if (!V || V->kind() == json::Value::Null)
    return nullptr;
  return object(Key);
}

Expected<const json::Array *> JsonFields::array(StringRef Key) const {
  const json::Value *V = O.get(Key);
  if (!V)
    return error(Key, "missing");
  if (const json::Array *A = V->getAsArray())
    return A;
  return error(Key, "expected an array, got " + describeJson(*V));
}

} // namespace collc::diag
