//===- runtime/gloo/WatchedMesh.cpp - A group's pairs, connected under watch -===//

#include "runtime/gloo/WatchedMesh.h"

#include "runtime/gloo/GroupStore.h"

#include "llvm/ADT/ScopeExit.h"

#include <gloo/common/error.h>
#include <gloo/transport/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/pair.h>

#include <condition_variable>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace collc::rt::gloo {

namespace {
/// How often the watcher asks the store (as a join's waits do).
constexpr std::chrono::milliseconds WatchEvery{10};
} // namespace

void WatchedMeshContext::connectWatched(GroupStore &Group,
                                        std::shared_ptr<::gloo::transport::Device> &Device) {
  std::mutex WatchM;
  std::condition_variable Stopped;
  bool Stop = false;
  std::thread Watcher;
  try {
    Watcher = std::thread([&] {
      std::unique_lock<std::mutex> L(WatchM);
      while (!Stopped.wait_for(L, WatchEvery, [&] { return Stop; })) {
        L.unlock();
        std::exception_ptr Why;
        try {
          Group.checkNow();
          if (Group.pastDeadline())
            throw ::gloo::IoException("timed out connecting the group's pairs: a peer did not "
                                      "connect by the join's deadline");
        } catch (...) {
          Why = std::current_exception();
        }
        if (Why)
          return abandon(Why);
        L.lock();
      }
    });
  } catch (const std::system_error &) {
    // No watcher: each pair waits up to the timeout, as in Gloo's connect.
  }
  auto Join = llvm::make_scope_exit([&] {
    {
      std::lock_guard<std::mutex> L(WatchM);
      Stop = true;
    }
    Stopped.notify_all();
    if (Watcher.joinable())
      Watcher.join();
  });
  try {
    connectMesh(Group, Device);
  } catch (...) {
    // A pair closed under it fails as Gloo sees fit; the reason is the
    // watcher's.
    throwIfAbandoned();
    throw;
  }
}

void WatchedMeshContext::connectMesh(GroupStore &Group,
                                     std::shared_ptr<::gloo::transport::Device> &Device) {
  // Gloo's rendezvous::Context::connectFullMesh, step for step.
  char Host[256] = {};
  if (gethostname(Host, sizeof(Host) - 1) != 0)
    throw std::system_error(errno, std::system_category());
  std::string LocalHost(Host);
  Group.set("rank_" + std::to_string(rank), std::vector<char>(LocalHost.begin(), LocalHost.end()));
  int LocalRank = 0;
  for (int I = 0; I < rank; ++I) {
    std::vector<char> Other = Group.get("rank_" + std::to_string(I));
    if (std::string(Other.begin(), Other.end()) == LocalHost)
      ++LocalRank;
  }
  std::shared_ptr<::gloo::transport::Context> T = Device->createContext(rank, size);
  T->setTimeout(getTimeout());
  std::vector<char> AllAddresses;
  for (int I = 0; I != size; ++I) {
    if (I == rank)
      continue;
    std::unique_ptr<::gloo::transport::Pair> &P = T->createPair(I);
    P->setLocalRank(LocalRank);
    std::vector<char> Bytes = P->address().bytes();
    AllAddresses.insert(AllAddresses.end(), Bytes.begin(), Bytes.end());
  }
  {
    // Every pair made: from here the watcher may close them.
    std::lock_guard<std::mutex> L(M);
    Connecting = T;
  }
  throwIfAbandoned();
  Group.set(std::to_string(rank), AllAddresses);
  for (int I = 0; I != size; ++I) {
    if (I == rank)
      continue;
    std::string Key = std::to_string(I);
    Group.wait({Key}, getTimeout());
    std::vector<char> Theirs = Group.get(Key);
    std::vector<char> Address = extractAddress(Theirs, I);
    {
      std::lock_guard<std::mutex> L(M);
      if (Abandoned)
        std::rethrow_exception(Abandoned);
      InConnect = I;
    }
    T->getPair(I)->connect(Address);
    std::lock_guard<std::mutex> L(M);
    InConnect = -1;
  }
  {
    // A pair closed while it waited returns as if connected. Once this
    // says connected, the watcher closes nothing.
    std::lock_guard<std::mutex> L(M);
    if (Abandoned)
      std::rethrow_exception(Abandoned);
    Connected = true;
  }
  device_ = Device;
  transportContext_ = std::move(T);
}

void WatchedMeshContext::abandon(std::exception_ptr Why) {
  std::lock_guard<std::mutex> L(M);
  if (Connected)
    return; // too late: the group formed
  if (!Abandoned)
    Abandoned = Why;
  if (!Connecting)
    return;
  // Only the pair whose connect waits: the store's waits end by themselves
  // (GroupStore.h), and the joining thread looks here before each connect.
  // Every close costs: it resets the pair's connection (SO_LINGER 0), and
  // a peer that had not yet accepted it (stopped, say) aborts in Gloo's
  // event loop when it does (getpeername fails, and Gloo enforces it on
  // its own thread); and it waits a tick of Gloo's loop (closing all 511
  // pairs of a join of 512 took 5 s). The others close as the failed join
  // drops them, gently.
  if (InConnect >= 0)
    Connecting->getPair(InConnect)->close();
}

void WatchedMeshContext::throwIfAbandoned() {
  std::lock_guard<std::mutex> L(M);
  if (Abandoned)
    std::rethrow_exception(Abandoned);
}

} // namespace collc::rt::gloo
