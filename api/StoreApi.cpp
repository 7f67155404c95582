//===- api/StoreApi.cpp - collc.h: the program's store ------------------===//
//
// collcStoreRegister: the program's callbacks as an rt::ExternalStore
// (runtime/launch/ExternalStore.h), which rendezvous "store:NAME" reaches.
// A callback's failure is an error naming the operation and the key; the
// program's own account of it stays with the program.
//
//===----------------------------------------------------------------------===//

#include "api/ApiEntry.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/launch/ExternalStore.h"

#include <vector>

using namespace llvm;
using namespace collc;
using namespace collc::api;

namespace {

class CallbackStore final : public rt::ExternalStore {
public:
  explicit CallbackStore(const collcStore_t &S) : S(S) {}

  Error set(StringRef Key, ArrayRef<char> Value) override {
    std::string K = Key.str();
    return result("set", Key, S.set(S.user, K.c_str(), Value.data(), Value.size()));
  }

  Expected<std::vector<char>> get(StringRef Key) override {
    std::string K = Key.str();
    Delivery D;
    if (Error E = result("get", Key, S.get(S.user, K.c_str(), &Delivery::take, &D)))
      return E;
    if (!D.Delivered)
      return rt::makeError(
          rt::ErrorKind::Backend,
          formatv("the store's get of '{0}' returned without delivering a value", Key));
    return std::move(D.Value);
  }

  Expected<bool> check(ArrayRef<std::string> Keys) override {
    std::vector<const char *> Pointers;
    for (const std::string &K : Keys)
      Pointers.push_back(K.c_str());
    int AllSet = 0;
    if (Error E = result("check", Keys.empty() ? "" : Keys.front(),
                         S.check(S.user, Pointers.data(), Pointers.size(), &AllSet)))
      return E;
    return AllSet != 0;
  }

  Expected<int64_t> add(StringRef Key, int64_t Delta) override {
    std::string K = Key.str();
    int64_t Sum = 0;
    if (Error E = result("add", Key, S.add(S.user, K.c_str(), Delta, &Sum)))
      return E;
    return Sum;
  }

  bool oneHost() const override { return S.oneHost != 0; }

private:
  /// What a get's callback delivers.
  struct Delivery {
    std::vector<char> Value;
    bool Delivered = false;
    static void take(void *Ctx, const void *Data, size_t Bytes) {
      auto *D = static_cast<Delivery *>(Ctx);
      const char *From = static_cast<const char *>(Data);
      D->Value.assign(From, From + (From ? Bytes : 0));
      D->Delivered = true;
    }
  };

  static Error result(StringRef Op, StringRef Key, int Rc) {
    if (Rc == 0)
      return Error::success();
    return rt::makeError(rt::ErrorKind::Backend,
                         formatv("the store's {0} of '{1}' failed (it returned {2})", Op, Key, Rc));
  }

  collcStore_t S;
};

} // namespace

extern "C" {

collcResult_t collcStoreRegister(const char *Name, const collcStore_t *Store) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Name, "name", "the store's name").versioned(Store, "store", /*Optional=*/false);
    if (Error E = A.done())
      return E;
    collcStore_t S = readVersioned(
        Store, collcStore_t{sizeof(collcStore_t), nullptr, nullptr, nullptr, nullptr, nullptr, 0});
    A.notNull(reinterpret_cast<const void *>(S.set), "store->set", "a function")
        .notNull(reinterpret_cast<const void *>(S.get), "store->get", "a function")
        .notNull(reinterpret_cast<const void *>(S.check), "store->check", "a function")
        .notNull(reinterpret_cast<const void *>(S.add), "store->add", "a function")
        .inRange(S.oneHost, "store->oneHost", 0, 1);
    if (Error E = A.done())
      return E;
    if (std::optional<std::string> Why = rt::badStoreName(Name))
      return makeApiError(collcInvalidArgument, formatv("name is \"{0}\": {1}", Name, *Why));
    rt::registerExternalStore(Name, std::make_shared<CallbackStore>(S));
    return Error::success();
  });
}

} // extern "C"
