//===- runtime/gloo/ProbedStore.h - A rendezvous store for a group's join -*- C++ -*-===//
//
// Gloo's FileStore or RedisStore, or the program's store
// (ExternalProbedStore.h), with what a group's join (GroupStore.h) needs
// beyond Gloo's Store interface:
//
// - has(): whether keys are set, without waiting (Gloo's stores can tell,
//   through their check(), but Store cannot ask it). A join's waits poll it
//   to watch, while they wait for peers, whether the group was refused, and
//   to wait in milliseconds where Gloo's own waits count whole seconds.
// - claim(): a key set once, atomically, by the first of several processes
//   that try; the others learn what it holds. Redis's SETNX is that. Gloo's
//   FileStore::set checks, then renames, and a second writer may pass the
//   check; a claim in a directory is a file of its own, written whole aside
//   and linked into place, which fails when the name is taken.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_PROBEDSTORE_H
#define COLLC_RUNTIME_GLOO_PROBEDSTORE_H

#include "runtime/launch/RendezvousAddress.h"

#include "llvm/Support/Error.h"

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace collc::rt::gloo {

/// Thrown when the store cannot be written (a directory that is gone, not
/// writable or full; a Redis server that refuses); what() says why.
struct StoreWriteFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ProbedStore : public ::gloo::rendezvous::Store {
public:
  /// Whether every key of \p Keys is set now (never waits).
  virtual bool has(const std::vector<std::string> &Keys) = 0;

  struct Claim {
    bool Set;           ///< this call set the key
    std::string Holder; ///< the value the key holds
  };
  /// Sets \p Key to \p Value unless a claim set it before, atomically.
  /// Throws StoreWriteFailed when the store cannot be written.
  virtual Claim claim(const std::string &Key, const std::string &Value) = 0;
  /// What a claim set \p Key to, if one did (never waits).
  virtual std::optional<std::string> claimed(const std::string &Key) = 0;

  /// Where \p Key is, for errors: a claim's file, or a Redis key.
  virtual std::string where(const std::string &Key) const = 0;

  /// Bounds each call to the store by \p Timeout where it could wait on
  /// the store itself (a Redis server that stopped answering): the call
  /// then fails, naming the store, instead of waiting forever.
  virtual void setTimeout(std::chrono::milliseconds Timeout) {}
  /// Gloo's text \p What of a failure in this store, with what it means
  /// where the store knows (a Redis call that timed out).
  virtual std::string explain(const std::string &What) const { return What; }

  /// What the store is, for advice in errors: "directory" or "Redis database".
  virtual const char *kind() const = 0;
};

/// Gloo's FileStore on \p Where's directory (created if need be) or its
/// RedisStore on \p Where's server (connected here); a store:NAME is
/// ExternalProbedStore.h's.
llvm::Expected<std::shared_ptr<ProbedStore>> openProbedStore(const RendezvousAddress &Where);

} // namespace collc::rt::gloo

#endif
