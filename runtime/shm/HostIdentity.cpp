//===- runtime/shm/HostIdentity.cpp - Which host a process is on -----------===//

#include "runtime/shm/HostIdentity.h"

#include "llvm/Support/xxhash.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

namespace collc::rt::shm {

namespace {

/// The first line of \p Path, or "" when it cannot be read.
std::string firstLine(const char *Path) {
  std::ifstream In(Path);
  std::string Line;
  std::getline(In, Line);
  return Line;
}

/// The namespace \p Ns of this process as its inode ("" when unknown: then
/// every process of the host reads "" alike).
std::string namespaceOf(const char *Ns) {
  struct stat St;
  std::string Path = std::string("/proc/self/ns/") + Ns;
  if (stat(Path.c_str(), &St) != 0)
    return "";
  return std::to_string(uint64_t(St.st_dev)) + ":" + std::to_string(uint64_t(St.st_ino));
}

} // namespace

namespace {
thread_local std::optional<std::string> ThreadPseudoHost;
} // namespace

PseudoHostScope::PseudoHostScope(std::string Name) : Saved(ThreadPseudoHost) {
  ThreadPseudoHost = std::move(Name);
}

PseudoHostScope::~PseudoHostScope() { ThreadPseudoHost = Saved; }

std::optional<std::string> hostEnvironment(llvm::StringRef Name) {
  if (Name == PseudoHostVariable && ThreadPseudoHost)
    return ThreadPseudoHost;
  if (const char *V = getenv(Name.str().c_str()))
    return std::string(V);
  return std::nullopt;
}

HostIdentity thisHost(HostEnvironment Env) {
  char Buf[256] = {0};
  if (gethostname(Buf, sizeof(Buf) - 1) != 0)
    Buf[0] = 0;
  std::string Host = Buf[0] ? Buf : "unknown host";
  std::optional<std::string> Pseudo = Env(PseudoHostVariable);
  // Every field is tagged and separated, so no two different sets of
  // fields read as the same text.
  std::ostringstream Id;
  Id << "host=" << Host << "\nboot=" << firstLine("/proc/sys/kernel/random/boot_id")
     << "\nnet=" << namespaceOf("net") << "\npid=" << namespaceOf("pid")
     << "\nipc=" << namespaceOf("ipc") << "\npseudo=" << (Pseudo ? "1:" + *Pseudo : "0") << "\n";
  HostIdentity H;
  H.Key = llvm::xxHash64(Id.str());
  H.Name = Pseudo ? Host + " (pseudo-host " + *Pseudo + ")" : Host;
  return H;
}

} // namespace collc::rt::shm
