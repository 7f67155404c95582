//===- runtime/gloo/WatchedMesh.h - A group's pairs, connected under watch -*- C++ -*-===//
//
// Gloo's rendezvous::Context::connectFullMesh connects a group's pairs one
// after another, and a pair whose peer never connects waits the whole
// timeout, looking at nothing else meanwhile: a rank of a group of N
// waited up to N-1 timeouts when a peer left the join (5 timeouts were
// measured at 4 ranks), and then named whoever it had waited for last.
//
// WatchedMeshContext makes the same exchange, key for key (Gloo
// 0.0~git20220518's: the processes of a run all run this code), on a
// transport context it keeps in reach. connectWatched runs it while a
// second thread asks the group's store, every 10 ms, whether the group can
// still form (GroupStore::checkNow: a refusal posted, a peer gone) and
// watches the join's deadline; on either it closes the pair whose connect
// is under way, which ends it at once, and the connect throws what the
// watcher learned.
// Where no thread can be started, the connect runs as Gloo's would.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_GLOO_WATCHEDMESH_H
#define COLLC_RUNTIME_GLOO_WATCHEDMESH_H

#include <gloo/rendezvous/context.h>

#include <exception>
#include <memory>
#include <mutex>

namespace collc::rt::gloo {

class GroupStore;

class WatchedMeshContext : public ::gloo::rendezvous::Context {
public:
  using ::gloo::rendezvous::Context::Context;

  /// Connects a pair to every other rank through \p Group on \p Device,
  /// as above. Throws what the watcher learned (GroupStore's refusals, or
  /// gloo::IoException at the join's deadline), else what Gloo throws.
  void connectWatched(GroupStore &Group, std::shared_ptr<::gloo::transport::Device> &Device);

private:
  /// Gloo's full-mesh exchange.
  void connectMesh(GroupStore &Group, std::shared_ptr<::gloo::transport::Device> &Device);
  /// Records \p Why and closes the pair whose connect is under way, if
  /// one is; nothing once the mesh is connected.
  void abandon(std::exception_ptr Why);
  /// Throws the reason the connect was abandoned, if it was.
  void throwIfAbandoned();

  std::mutex M; ///< guards what follows
  std::shared_ptr<::gloo::transport::Context> Connecting;
  /// The rank whose pair's connect is under way, -1 when none is.
  int InConnect = -1;
  std::exception_ptr Abandoned;
  bool Connected = false;
};

} // namespace collc::rt::gloo

#endif
