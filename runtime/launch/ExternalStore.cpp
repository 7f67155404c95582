//===- runtime/launch/ExternalStore.cpp - A store the program brings ------===//

#include "runtime/launch/ExternalStore.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <mutex>

using namespace llvm;

namespace collc::rt {

ExternalStore::~ExternalStore() = default;

namespace {

struct Registry {
  std::mutex M;
  std::map<std::string, std::shared_ptr<ExternalStore>, std::less<>> Stores;
};

/// Never destroyed: a store may be looked up while the process exits.
Registry &registry() {
  static Registry *R = new Registry;
  return *R;
}

} // namespace

void registerExternalStore(StringRef Name, std::shared_ptr<ExternalStore> Store) {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  R.Stores[Name.str()] = std::move(Store);
}

Expected<std::shared_ptr<ExternalStore>> externalStore(StringRef Name) {
  Registry &R = registry();
  std::lock_guard<std::mutex> L(R.M);
  auto It = R.Stores.find(Name);
  if (It == R.Stores.end() || !It->second)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("rendezvous 'store:{0}': no store is registered as '{0}' in this "
                             "process (collcStoreRegister registers one)",
                             Name));
  return It->second;
}

std::optional<std::string> badStoreName(StringRef Name) {
  if (Name.empty())
    return std::string("the store's name is empty");
  for (char C : Name)
    if (!isAlnum(C) && C != '_' && C != '-' && C != '.')
      return formatv("the store's name '{0}' holds '{1}': expected letters, digits, '_', '-' "
                     "and '.'",
                     Name, StringRef(&C, 1))
          .str();
  return std::nullopt;
}

} // namespace collc::rt
