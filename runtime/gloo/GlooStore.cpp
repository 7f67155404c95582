//===- runtime/gloo/GlooStore.cpp - Where the processes of a gloo run meet -===//

#include "runtime/gloo/GlooStore.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/gloo/ProbedStore.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

#define HIREDIS_NESTED_INCLUDE // Debian installs hiredis.h under hiredis/
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/redis_store.h>
#include <gloo/transport/tcp/device.h>

#include <fcntl.h>
#include <mutex>
#include <optional>
#include <signal.h>
#include <stdexcept>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::gloo {

namespace {

/// Gloo's \p GlooStore (FileStore or RedisStore) with its check() asked
/// as ProbedStore::has.
template <typename GlooStore> class Probed : public ProbedStore {
public:
  template <typename... Args>
  Probed(const char *Kind, Args &&...A) : Kind(Kind), Inner(std::forward<Args>(A)...) {}
  void set(const std::string &Key, const std::vector<char> &Data) override { Inner.set(Key, Data); }
  std::vector<char> get(const std::string &Key) override { return Inner.get(Key); }
  void wait(const std::vector<std::string> &Keys) override { Inner.wait(Keys); }
  void wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &T) override {
    Inner.wait(Keys, T);
  }
  bool has(const std::vector<std::string> &Keys) override { return Inner.check(Keys); }
  const char *kind() const override { return Kind; }

private:
  /// FileStore's check() is protected.
  struct Open : GlooStore {
    using GlooStore::check;
    using GlooStore::GlooStore;
  };
  const char *Kind;
  Open Inner;
};

/// Redis sets a key only when it is unset (SETNX) in one step.
class ProbedRedisStore final : public Probed<::gloo::rendezvous::RedisStore> {
public:
  ProbedRedisStore(const std::string &Host, int Port) : Probed("Redis database", Host, Port) {}
  Claim claim(const std::string &Key, const std::string &Value) override {
    try {
      set(Key, std::vector<char>(Value.begin(), Value.end()));
      return {true, Value};
    } catch (const std::exception &) {
      if (!has({Key}))
        throw; // not a key already set: the server's own failure
    }
    std::vector<char> Held = get(Key);
    return {false, std::string(Held.begin(), Held.end())};
  }
};

/// FileStore checks, then renames (two steps): a claim is a file of its own
/// instead, made whole aside and linked into place, which fails when the
/// name is taken.
class ProbedFileStore final : public Probed<::gloo::rendezvous::FileStore> {
public:
  explicit ProbedFileStore(std::string Directory)
      : Probed("directory", Directory), Directory(std::move(Directory)) {}
  Claim claim(const std::string &Key, const std::string &Value) override {
    std::string Path = formatv("{0}/collc-claim-{1:x-16}", Directory, xxHash64(Key)).str();
    std::string Aside = formatv("{0}.{1}", Path, getpid()).str();
    auto Fail = [&](StringRef What) {
      throw std::runtime_error(formatv("cannot {0} '{1}': {2}", What, Aside,
                                       std::error_code(errno, std::generic_category()).message())
                                   .str());
    };
    int FD = open(Aside.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (FD < 0)
      Fail("create");
    bool Written = ::write(FD, Value.data(), Value.size()) == ssize_t(Value.size());
    close(FD);
    if (!Written)
      Fail("write");
    bool Set = link(Aside.c_str(), Path.c_str()) == 0;
    int LinkErrno = errno;
    unlink(Aside.c_str());
    if (Set)
      return {true, Value};
    if (LinkErrno != EEXIST) {
      errno = LinkErrno;
      Fail("link");
    }
    ErrorOr<std::unique_ptr<MemoryBuffer>> Held = MemoryBuffer::getFile(Path);
    return {false, Held ? (*Held)->getBuffer().str() : std::string("an unreadable claim")};
  }

private:
  std::string Directory;
};

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

bool isLoopback(StringRef Host) {
  return Host == "127.0.0.1" || Host == "localhost" || Host == "::1";
}

} // namespace

std::string deviceHostname(const RendezvousAddress &Where) {
  if (const char *Env = getenv("COLLC_GLOO_HOSTNAME"); Env && *Env)
    return Env;
  if (Where.How == RendezvousAddress::Kind::Redis && !isLoopback(Where.Host)) {
    char Name[256] = {};
    if (gethostname(Name, sizeof(Name) - 1) == 0 && Name[0])
      return Name;
  }
  return "127.0.0.1";
}

Error configureRendezvous(const RendezvousAddress &Where) {
  if (Where.How == RendezvousAddress::Kind::Mpi)
    return makeError(ErrorKind::InvalidArgument,
                     "the gloo backend meets through a store: give --rendezvous file:DIR or "
                     "redis://HOST:PORT, not mpi");
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
                     "(file:DIR or redis://HOST:PORT) before joining a group");
  const RendezvousAddress &W = *S.Where;
  try {
    if (W.How == RendezvousAddress::Kind::File) {
      if (std::error_code EC = sys::fs::create_directories(W.Directory))
        return makeError(ErrorKind::Backend, formatv("gloo rendezvous directory '{0}': {1}",
                                                     W.Directory, EC.message()));
      // create_directories takes an existing file for a directory.
      if (!sys::fs::is_directory(W.Directory))
        return makeError(ErrorKind::InvalidArgument,
                         formatv("gloo rendezvous directory '{0}': it exists and is not a "
                                 "directory; expected file:DIR with a directory new to this run",
                                 W.Directory));
      S.Store = std::make_shared<ProbedFileStore>(W.Directory);
    } else {
      S.Store = std::make_shared<ProbedRedisStore>(W.Host, int(W.Port));
    }
  } catch (const std::exception &X) {
    return makeError(ErrorKind::Backend,
                     formatv("gloo rendezvous {0} is not usable: {1}", W.text(), X.what()));
  }
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
  ::gloo::transport::tcp::attr Attr;
  Attr.hostname = deviceHostname(S.Where.value_or(RendezvousAddress()));
  try {
    S.Device = ::gloo::transport::tcp::CreateDevice(Attr);
  } catch (const std::exception &X) {
    return makeError(ErrorKind::Backend, formatv("gloo cannot listen on '{0}' (set "
                                                 "COLLC_GLOO_HOSTNAME to an address of this "
                                                 "host): {1}",
                                                 Attr.hostname, X.what()));
  }
  return S.Device;
}

} // namespace collc::rt::gloo
