//===- runtime/gloo/ClaimHolder.cpp - The process a rank's claim names ----===//

#include "runtime/gloo/ClaimHolder.h"

#include "ir/Quoting.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <random>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::gloo {

namespace {

std::string hostName() {
  char Name[256] = {};
  if (gethostname(Name, sizeof(Name) - 1) != 0 || !Name[0])
    return "unknown-host";
  return Name;
}

/// What /proc/PID/stat says of process \p Pid, if it can be read: when it
/// started (clock ticks since boot, the 22nd field) and whether it ended (a
/// zombie that its parent has not yet reaped: kill() still finds it, and a
/// rank SIGKILLed under a launcher is one for a while).
struct ProcessStat {
  uint64_t Start = 0;
  bool Ended = false;
};
std::optional<ProcessStat> processStat(long Pid) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Stat =
      MemoryBuffer::getFileAsStream(formatv("/proc/{0}/stat", Pid).str());
  if (!Stat)
    return std::nullopt;
  // After the command's name (in parentheses, which it may contain).
  StringRef After = (*Stat)->getBuffer().rsplit(')').second;
  SmallVector<StringRef, 24> Fields;
  After.split(Fields, ' ', -1, /*KeepEmpty=*/false);
  ProcessStat S;
  // Fields from the 3rd (state) on: the 22nd is the 20th here.
  if (Fields.size() < 20 || Fields[19].getAsInteger(10, S.Start))
    return std::nullopt;
  S.Ended = Fields[0] == "Z" || Fields[0] == "X";
  return S;
}

/// This machine's boot (/proc/sys/kernel/random/boot_id without its
/// dashes), or "0" where it cannot be read. Two machines may share a host
/// name (cloned VMs, `localhost`); they never share a boot.
std::string bootId() {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Id =
      MemoryBuffer::getFileAsStream("/proc/sys/kernel/random/boot_id");
  if (!Id)
    return "0";
  std::string Hex;
  for (char C : (*Id)->getBuffer())
    if (isHexDigit(C))
      Hex += C;
  return Hex.size() == 32 ? Hex : "0";
}

/// This process's pid namespace (the inode /proc/self/ns/pid names), or 0:
/// processes of one machine in different pid namespaces (two containers on
/// the host's network) cannot see each other's pids.
uint64_t pidNamespace() {
  struct stat St;
  if (stat("/proc/self/ns/pid", &St) != 0)
    return 0;
  return uint64_t(St.st_ino);
}

} // namespace

const ClaimHolder &ClaimHolder::thisProcess() {
  static const ClaimHolder Me = [] {
    ClaimHolder H;
    H.Host = hostName();
    H.Pid = long(getpid());
    if (std::optional<ProcessStat> S = processStat(H.Pid))
      H.Start = S->Start;
    std::random_device R;
    H.Nonce = (uint64_t(R()) << 32) ^ R();
    H.Boot = bootId();
    H.PidNs = pidNamespace();
    return H;
  }();
  return Me;
}

std::optional<ClaimHolder> ClaimHolder::parse(StringRef Text) {
  ClaimHolder H;
  SmallVector<StringRef, 5> Parts;
  Text.split(Parts, ' ');
  if (Parts.size() != 5)
    return std::nullopt;
  auto [Host, Pid] = Parts[0].rsplit(':');
  H.Host = Host.str();
  H.Boot = Parts[3].str();
  if (Host.empty() || Pid.getAsInteger(10, H.Pid) || H.Pid <= 0 ||
      Parts[1].getAsInteger(10, H.Start) || Parts[2].getAsInteger(16, H.Nonce) ||
      H.Boot.empty() || Parts[4].getAsInteger(10, H.PidNs))
    return std::nullopt;
  return H;
}

std::string ClaimHolder::text() const {
  return formatv("{0}:{1} {2} {3:x-} {4} {5}", Host, Pid, Start, Nonce, Boot, PidNs).str();
}

std::string ClaimHolder::name() const {
  return formatv("{0}:{1}", escapeForMessage(Host), Pid).str();
}

bool ClaimHolder::seenFromHere() const {
  const ClaimHolder &Me = thisProcess();
  return Host == Me.Host && Boot != "0" && Boot == Me.Boot && PidNs != 0 && PidNs == Me.PidNs;
}

bool ClaimHolder::mayRun() const {
  if (!seenFromHere())
    return true;
  if (kill(pid_t(Pid), 0) != 0 && errno != EPERM)
    return false;
  std::optional<ProcessStat> S = processStat(Pid);
  return !S || (!S->Ended && (Start == 0 || S->Start == Start));
}

} // namespace collc::rt::gloo
