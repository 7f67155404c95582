//===- tests/support/JsonPaths.cpp - A JSON file's values by path ----------===//

#include "tests/support/JsonPaths.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace collc::test {

class JsonPathsBuilder {
public:
  explicit JsonPathsBuilder(JsonPaths &Out) : Out(Out) {}

  void add(const std::string &Path, const json::Value &V) {
    JsonPaths::Entry E;
    if (auto S = V.getAsString()) {
      E.K = JsonPaths::Kind::String;
      E.Text = S->str();
    } else if (auto I = V.getAsInteger()) {
      E.K = JsonPaths::Kind::Integer;
      E.Number = *I;
    } else if (const json::Array *A = V.getAsArray()) {
      E.K = JsonPaths::Kind::Array;
      E.Number = int64_t(A->size());
      for (size_t K = 0; K != A->size(); ++K)
        add(Path + "/" + std::to_string(K), (*A)[K]);
    } else if (const json::Object *O = V.getAsObject()) {
      for (const auto &[Key, Member] : *O)
        add(Path + "/" + Key.str(), Member);
    }
    Out.Values[Path] = std::move(E);
  }

private:
  JsonPaths &Out;
};

Expected<JsonPaths> JsonPaths::read(StringRef File) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFile(File);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read %s: %s", File.str().c_str(),
                             Buf.getError().message().c_str());
  Expected<json::Value> V = json::parse((*Buf)->getBuffer());
  if (!V)
    return createStringError(inconvertibleErrorCode(), "%s: %s", File.str().c_str(),
                             toString(V.takeError()).c_str());
  JsonPaths Out;
  JsonPathsBuilder(Out).add("", *V);
  return Out;
}

std::string JsonPaths::str(StringRef Path) const {
  auto It = Values.find(Path.str());
  if (It == Values.end() || It->second.K != Kind::String)
    return "<no " + Path.str() + ">";
  return It->second.Text;
}

int64_t JsonPaths::num(StringRef Path) const {
  auto It = Values.find(Path.str());
  return It == Values.end() || It->second.K != Kind::Integer ? INT64_MIN : It->second.Number;
}

int64_t JsonPaths::size(StringRef Path) const {
  auto It = Values.find(Path.str());
  return It == Values.end() || It->second.K != Kind::Array ? -1 : It->second.Number;
}

} // namespace collc::test
