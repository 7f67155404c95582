//===- runtime/gloo/GroupStore.h - A gloo group's view of the rendezvous -*- C++ -*-===//
//
// Where the ranks of one gloo group meet: the process's store (GlooStore.h)
// under the group's prefix, with three things Gloo's PrefixStore lacks.
//
// - Waits take the group's timeout. Gloo's connectFullMesh waits with the
//   store's default (30 s) whatever the context's timeout; here every wait
//   takes the group's (COLLC_TIMEOUT_MS, --timeout-ms, an executor's
//   option), no longer and no shorter.
// - A rank is claimed before the group forms, atomically (ProbedStore::claim):
//   the first process to claim a rank holds it; a second one (two processes
//   started with the same rank, or a rendezvous that served an earlier run)
//   is refused at once, naming the process that holds it.
// - A refused rank posts why under the group's refusal key, and every wait
//   watches that key: the ranks already waiting for their peers fail at
//   once with that reason instead of waiting out their timeout.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_GROUPSTORE_H
#define COLLC_RUNTIME_GLOO_GROUPSTORE_H

#include "runtime/gloo/ProbedStore.h"

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace collc::rt::gloo {

/// Thrown by a GroupStore whose group cannot form; what() says why.
struct JoinRefused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class GroupStore : public ::gloo::rendezvous::Store {
public:
  GroupStore(ProbedStore &Inner, std::string Prefix, std::chrono::milliseconds Timeout);

  void set(const std::string &Key, const std::vector<char> &Data) override;
  std::vector<char> get(const std::string &Key) override;
  /// Waits up to the group's timeout, whatever the caller asks; throws
  /// JoinRefused as soon as the group is refused, and gloo::IoException at
  /// the timeout.
  void wait(const std::vector<std::string> &Keys) override;
  void wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &) override;

  /// Claims \p Rank for this process (see above). Throws JoinRefused, after
  /// posting why, when another process holds it or the group was refused.
  void claimRank(size_t Rank);

  /// This process as a claim names it: host:pid.
  static std::string thisProcess();

private:
  std::string key(const std::string &Key) const { return Prefix + "/" + Key; }
  /// Posts \p Why as the group's refusal (the first one stays) and throws it.
  [[noreturn]] void refuse(const std::string &Why);

  ProbedStore &Inner;
  std::string Prefix;
  std::chrono::milliseconds Timeout;
};

} // namespace collc::rt::gloo

#endif
