//===- runtime/gloo/ProbedStore.h - A store that can be asked without waiting -*- C++ -*-===//
//
// Gloo's FileStore and RedisStore can tell whether keys are set without
// waiting for them (their check()), but Gloo's Store interface cannot ask
// it. A group's waits must ask it (GroupStore.h): to watch, while they wait
// for their peers, whether the group was refused, and to wait in
// milliseconds where Gloo's own waits count whole seconds. And a group's
// ranks are claimed atomically, which FileStore's set is not.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_PROBEDSTORE_H
#define COLLC_RUNTIME_GLOO_PROBEDSTORE_H

#include <gloo/rendezvous/store.h>

#include <string>
#include <vector>

namespace collc::rt::gloo {

class ProbedStore : public ::gloo::rendezvous::Store {
public:
  /// Whether every key of \p Keys is set now (never waits).
  virtual bool has(const std::vector<std::string> &Keys) = 0;
  /// Sets \p Key to \p Value unless it is set, atomically. Returns whether
  /// this call set it, and the value the key holds.
  struct Claim {
    bool Set;
    std::string Holder;
  };
  virtual Claim claim(const std::string &Key, const std::string &Value) = 0;
  /// What the store is, for advice in errors: "directory" or "Redis database".
  virtual const char *kind() const = 0;
};

} // namespace collc::rt::gloo

#endif
