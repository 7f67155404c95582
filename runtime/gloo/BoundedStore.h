//===- runtime/gloo/BoundedStore.h - A store whose waits have our timeout -*- C++ -*-===//
//
// Gloo's Context::connectFullMesh waits on its store with the store's
// default (Store::kDefaultTimeout, 30 s: PrefixStore passes it explicitly),
// not with the context's timeout. Over a BoundedStore every wait without a
// timeout of its own takes the group's, so a join waits as long as collc
// says (COLLC_TIMEOUT_MS, --timeout-ms, an executor's option), no longer
// and no shorter.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_BOUNDEDSTORE_H
#define COLLC_RUNTIME_GLOO_BOUNDEDSTORE_H

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

namespace collc::rt::gloo {

class BoundedStore : public ::gloo::rendezvous::Store {
public:
  BoundedStore(::gloo::rendezvous::Store &Inner, std::chrono::milliseconds Timeout)
      : Inner(Inner), Timeout(Timeout) {}
  void set(const std::string &Key, const std::vector<char> &Data) override { Inner.set(Key, Data); }
  std::vector<char> get(const std::string &Key) override {
    // A store's get waits for a missing key with its own default.
    Inner.wait({Key}, Timeout);
    return Inner.get(Key);
  }
  void wait(const std::vector<std::string> &Keys) override { Inner.wait(Keys, Timeout); }
  void wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &) override {
    Inner.wait(Keys, Timeout);
  }

private:
  ::gloo::rendezvous::Store &Inner;
  std::chrono::milliseconds Timeout;
};

} // namespace collc::rt::gloo

#endif
