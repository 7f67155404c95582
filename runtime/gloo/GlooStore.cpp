//===- runtime/gloo/GlooStore.cpp - Where the processes of a gloo run meet -===//

#include "runtime/gloo/GlooStore.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/gloo/ExternalProbedStore.h"
#include "runtime/gloo/LoopFailureExit.h"
#include "runtime/gloo/LoopSpinner.h"
#include "runtime/gloo/ProbedStore.h"
#include "runtime/launch/ExternalStore.h"

#include "llvm/Support/FormatVariadic.h"

#include <gloo/transport/tcp/device.h>

#include <mutex>
#include <netdb.h>
#include <optional>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::gloo {

namespace {

struct ProcessRendezvous {
  std::mutex M;
  std::optional<RendezvousAddress> Where;
  std::shared_ptr<ProbedStore> Store;
  std::shared_ptr<::gloo::transport::Device> Device;
};
ProcessRendezvous &state() {
  static ProcessRendezvous S;
  return S;
}

/// Why \p Host does not resolve as Gloo looks it up (getaddrinfo, any
/// family, a stream socket), if it does not.
std::optional<std::string> unresolvable(const std::string &Host) {
  addrinfo Hints = {};
  Hints.ai_family = AF_UNSPEC;
  Hints.ai_socktype = SOCK_STREAM;
  addrinfo *Found = nullptr;
  int Rc = getaddrinfo(Host.c_str(), nullptr, &Hints, &Found);
  if (Rc == 0) {
    freeaddrinfo(Found);
    return std::nullopt;
  }
  return std::string("the name does not resolve (") + gai_strerror(Rc) + ")";
}

bool isLoopback(StringRef Host) {
  return Host == "127.0.0.1" || Host == "localhost" || Host == "::1";
}

/// Whether the processes meeting at \p Where may be on other hosts: a
/// Redis server elsewhere, or a store the program did not say is this
/// host's alone.
bool spansHosts(const RendezvousAddress &Where) {
  if (Where.How == RendezvousAddress::Kind::Redis)
    return !isLoopback(Where.Host);
  if (Where.How == RendezvousAddress::Kind::Store) {
    Expected<std::shared_ptr<ExternalStore>> S = externalStore(Where.StoreName);
    if (!S) {
      consumeError(S.takeError()); // the join says so
      return false;
    }
    return !(*S)->oneHost();
  }
  return false;
}

} // namespace

std::string deviceHostname(const RendezvousAddress &Where) {
  if (const char *Env = getenv("COLLC_GLOO_HOSTNAME"); Env && *Env)
    return Env;
  if (spansHosts(Where)) {
    char Name[256] = {};
    if (gethostname(Name, sizeof(Name) - 1) == 0 && Name[0])
      return Name;
  }
  return "127.0.0.1";
}

Error configureRendezvous(const RendezvousAddress &Where) {
  if (std::optional<std::string> Why = rendezvousMismatch("gloo", Where))
    return makeError(ErrorKind::InvalidArgument, *Why);
  // A store that is not registered is refused before it becomes the
  // process's rendezvous.
  if (Where.How == RendezvousAddress::Kind::Store)
    if (Expected<std::shared_ptr<ExternalStore>> S = externalStore(Where.StoreName); !S)
      return S.takeError();
  ProcessRendezvous &S = state();
  std::lock_guard<std::mutex> L(S.M);
  if (S.Where) {
    if (S.Where->text() == Where.text())
      return Error::success();
    return makeError(ErrorKind::InvalidArgument,
                     formatv("the gloo rendezvous of this process is already {0}; it cannot "
                             "become {1}",
                             S.Where->text(), Where.text()));
  }
  S.Where = Where;
  return Error::success();
}

Expected<std::shared_ptr<ProbedStore>> processStore() {
  ProcessRendezvous &S = state();
  std::lock_guard<std::mutex> L(S.M);
  if (S.Store)
    return S.Store;
  if (!S.Where)
    return makeError(ErrorKind::InvalidArgument,
                     "the gloo backend has no rendezvous: call gloo::configureRendezvous "
                     "(file:DIR, redis://HOST:PORT or store:NAME) before joining a group");
  if (S.Where->How == RendezvousAddress::Kind::Store) {
    S.Store = openExternalProbedStore(S.Where->StoreName);
    return S.Store;
  }
  Expected<std::shared_ptr<ProbedStore>> Store = openProbedStore(*S.Where);
  if (!Store)
    return Store.takeError();
  S.Store = std::move(*Store);
  return S.Store;
}

Expected<std::shared_ptr<::gloo::transport::Device>> processDevice() {
  ProcessRendezvous &S = state();
  std::lock_guard<std::mutex> L(S.M);
  if (S.Device)
    return S.Device;
  // Gloo writes to its sockets without MSG_NOSIGNAL: a write to a peer
  // that died would kill this process with SIGPIPE instead of failing the
  // operation with the peer named. Ignore it, unless the program installed
  // a handler of its own.
  struct sigaction Old = {};
  if (sigaction(SIGPIPE, nullptr, &Old) == 0 && Old.sa_handler == SIG_DFL)
    signal(SIGPIPE, SIG_IGN);
  // What the device's loop thread throws ends the process as a failed rank.
  endProcessOnGlooLoopFailure();
  ::gloo::transport::tcp::attr Attr;
  Attr.hostname = deviceHostname(S.Where.value_or(RendezvousAddress()));
  // Gloo reads getaddrinfo's result even where the lookup failed (a
  // segfault, or its own error, by chance): a name that does not resolve is
  // refused here first.
  if (std::optional<std::string> Why = unresolvable(Attr.hostname))
    return makeError(ErrorKind::InvalidArgument,
                     formatv("gloo cannot listen on '{0}': {1} (set COLLC_GLOO_HOSTNAME to a "
                             "name or address of this host, without a port or brackets)",
                             Attr.hostname, *Why));
  try {
    // Its contexts go at once (LoopSpinner.h), not a loop tick per pair.
    S.Device = quickTeardown(::gloo::transport::tcp::CreateDevice(Attr));
  } catch (const std::exception &X) {
    return makeError(ErrorKind::Backend, formatv("gloo cannot listen on '{0}' (set "
                                                 "COLLC_GLOO_HOSTNAME to an address of this "
                                                 "host): {1}",
                                                 Attr.hostname, X.what()));
  }
  return S.Device;
}

} // namespace collc::rt::gloo
