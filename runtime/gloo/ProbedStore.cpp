//===- runtime/gloo/ProbedStore.cpp - A rendezvous store for a group's join -===//

#include "runtime/gloo/ProbedStore.h"

#include "runtime/exec/RuntimeError.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

#define HIREDIS_NESTED_INCLUDE // Debian installs hiredis.h under hiredis/
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/redis_store.h>

#include <cerrno>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::gloo {

namespace {

/// Gloo's stores with what they keep protected in reach.
struct OpenFileStore : ::gloo::rendezvous::FileStore {
  using FileStore::check;
  using FileStore::FileStore;
};
struct OpenRedisStore : ::gloo::rendezvous::RedisStore {
  using RedisStore::check;
  using RedisStore::RedisStore;
  redisContext *context() { return redis_; }
};

/// Gloo's store \p Open with its check() asked as has().
template <typename Open> class Probed : public ProbedStore {
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

protected:
  const char *Kind;
  Open Inner;
};

class ProbedRedisStore final : public Probed<OpenRedisStore> {
public:
  ProbedRedisStore(const std::string &Host, int Port) : Probed("Redis database", Host, Port) {}
  void setTimeout(std::chrono::milliseconds Timeout) override {
    timeval T;
    T.tv_sec = time_t(Timeout.count() / 1000);
    T.tv_usec = suseconds_t(Timeout.count() % 1000 * 1000);
    redisSetTimeout(Inner.context(), T);
    this->Timeout = Timeout;
  }
  /// SETNX on Gloo's connection. Not through Gloo's set, which is SETNX too
  /// but throws on a key already set before it frees Redis's reply.
  Claim claim(const std::string &Key, const std::string &Value) override {
    redisContext *C = Inner.context();
    auto *Reply = static_cast<redisReply *>(
        redisCommand(C, "SETNX %b %b", Key.data(), Key.size(), Value.data(), Value.size()));
    if (!Reply)
      throw StoreWriteFailed(explain(std::string("Redis: ") + C->errstr));
    auto Free = make_scope_exit([&] { freeReplyObject(Reply); });
    if (Reply->type == REDIS_REPLY_ERROR)
      throw StoreWriteFailed(std::string("Redis: ") + Reply->str);
    if (Reply->type != REDIS_REPLY_INTEGER)
      throw StoreWriteFailed("Redis answered SETNX with a reply of type " +
                             std::to_string(Reply->type) + ", not an integer");
    if (Reply->integer == 1)
      return {true, Value};
    return {false, claimed(Key).value_or("a claim that went away")};
  }
  std::optional<std::string> claimed(const std::string &Key) override {
    if (!has({Key}))
      return std::nullopt;
    std::vector<char> Held = get(Key);
    return std::string(Held.begin(), Held.end());
  }
  std::string where(const std::string &Key) const override { return "key '" + Key + "'"; }
  std::string explain(const std::string &What) const override {
    // hiredis's words for a read that its timeout ended (EAGAIN).
    if (Timeout.count() && StringRef(What).contains("Resource temporarily unavailable"))
      return formatv("the Redis server did not answer within {0} ms ({1})", Timeout.count(), What)
          .str();
    return What;
  }

private:
  /// What setTimeout gave, for errors.
  std::chrono::milliseconds Timeout{0};
};

class ProbedFileStore final : public Probed<OpenFileStore> {
public:
  explicit ProbedFileStore(std::string Directory)
      : Probed("directory", Directory), Directory(std::move(Directory)) {}

  Claim claim(const std::string &Key, const std::string &Value) override {
    std::string Path = claimPath(Key);
    // Aside under a name no other process (of any host) takes.
    std::string Aside = formatv("{0}.{1:x-16}", Path, randomWord()).str();
    int FD = open(Aside.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (FD < 0)
      failed("create", Aside, errno);
    auto Remove = make_scope_exit([&] { unlink(Aside.c_str()); });
    for (size_t Done = 0; Done != Value.size();) {
      ssize_t N = ::write(FD, Value.data() + Done, Value.size() - Done);
      if (N < 0 && errno == EINTR)
        continue;
      if (N <= 0) {
        int E = N < 0 ? errno : ENOSPC;
        close(FD);
        failed("write", Aside, E);
      }
      Done += size_t(N);
    }
    if (close(FD) != 0)
      failed("write", Aside, errno);
    if (link(Aside.c_str(), Path.c_str()) == 0)
      return {true, Value};
    int E = errno;
    // NFS may answer EEXIST to a link it made (a retried request): then
    // the file aside has two names.
    struct stat St;
    if (E == EEXIST && stat(Aside.c_str(), &St) == 0 && St.st_nlink == 2)
      return {true, Value};
    if (E != EEXIST)
      failed("link", Path, E);
    std::optional<std::string> Held = claimed(Key);
    return {false, Held.value_or("an unreadable claim")};
  }

  std::optional<std::string> claimed(const std::string &Key) override {
    ErrorOr<std::unique_ptr<MemoryBuffer>> Held = MemoryBuffer::getFile(claimPath(Key));
    if (!Held)
      return std::nullopt;
    return (*Held)->getBuffer().str();
  }

  std::string where(const std::string &Key) const override { return claimPath(Key); }

private:
  std::string claimPath(const std::string &Key) const {
    return formatv("{0}/collc-claim-{1:x-16}", Directory, xxHash64(Key)).str();
  }
  [[noreturn]] static void failed(StringRef What, StringRef Path, int Errno) {
    throw StoreWriteFailed(formatv("cannot {0} '{1}': {2}", What, Path,
                                   std::error_code(Errno, std::generic_category()).message())
                               .str());
  }
  static uint64_t randomWord() {
    std::random_device R;
    return (uint64_t(R()) << 32) ^ R();
  }

  std::string Directory;
};

} // namespace

Expected<std::shared_ptr<ProbedStore>> openProbedStore(const RendezvousAddress &Where) {
  try {
    if (Where.How == RendezvousAddress::Kind::File) {
      if (std::error_code EC = sys::fs::create_directories(Where.Directory))
        return makeError(ErrorKind::Backend, formatv("gloo rendezvous directory '{0}': {1}",
                                                     Where.Directory, EC.message()));
      // create_directories takes an existing file for a directory.
      if (!sys::fs::is_directory(Where.Directory))
        return makeError(ErrorKind::InvalidArgument,
                         formatv("gloo rendezvous directory '{0}': it exists and is not a "
                                 "directory; expected file:DIR with a directory new to this run",
                                 Where.Directory));
      return std::make_shared<ProbedFileStore>(Where.Directory);
    }
    if (Where.How == RendezvousAddress::Kind::Redis)
      return std::make_shared<ProbedRedisStore>(Where.Host, int(Where.Port));
  } catch (const std::exception &X) {
    return makeError(ErrorKind::Backend,
                     formatv("gloo rendezvous {0} is not usable: {1}", Where.text(), X.what()));
  }
  return makeError(
      ErrorKind::InvalidArgument,
      formatv("gloo rendezvous {0}: expected file:DIR or redis://HOST:PORT", Where.text()));
}

} // namespace collc::rt::gloo
