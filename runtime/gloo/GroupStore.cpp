//===- runtime/gloo/GroupStore.cpp - A gloo group's view of the rendezvous -===//

#include "runtime/gloo/GroupStore.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gloo/common/error.h>

#include <cerrno>
#include <optional>
#include <random>
#include <signal.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace collc::rt::gloo {

namespace {

/// Under the group's prefix: why the group cannot form, once a rank knows.
constexpr const char *RefusalKey = "collc.refused";
/// How often a wait asks the store again (as Gloo's own stores do).
constexpr std::chrono::milliseconds PollEvery{10};
/// How often a wait looks whether the peers that claimed their ranks still
/// run, and how many claims not yet seen a look reads at most (claims never
/// change: one read is kept; a large group's claims are read over several
/// looks, so that its ranks load the store no more than their key polls).
constexpr std::chrono::milliseconds LivenessEvery{250};
constexpr size_t ClaimReadsPerLook = 16;

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

/// A process as a claim names it: "HOST:PID START NONCE BOOT PIDNS". The
/// nonce tells this process from an earlier one with the same host and pid
/// (a container's pid 1); the start time tells a running process from one
/// whose pid was reused; the boot and the pid namespace tell whether this
/// process can see that pid at all.
struct ClaimHolder {
  std::string Host;
  long Pid = 0;
  uint64_t Start = 0;
  uint64_t Nonce = 0;
  std::string Boot = "0";
  uint64_t PidNs = 0;

  static const ClaimHolder &thisProcess() {
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
  /// The holder \p Text names, if it is a claim collc wrote.
  static std::optional<ClaimHolder> parse(StringRef Text) {
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
  std::string text() const {
    return formatv("{0}:{1} {2} {3:x-} {4} {5}", Host, Pid, Start, Nonce, Boot, PidNs).str();
  }
  /// How errors name it.
  std::string name() const { return formatv("{0}:{1}", Host, Pid).str(); }
  /// Whether its pid means a process this one can see: the same host, boot
  /// and pid namespace, each known on both sides.
  bool seenFromHere() const {
    const ClaimHolder &Me = thisProcess();
    return Host == Me.Host && Boot != "0" && Boot == Me.Boot && PidNs != 0 && PidNs == Me.PidNs;
  }
  /// Whether it may be running: false only when it is known to have ended
  /// (a pid seen from here that is gone, a zombie, or reused by a process
  /// started at another time). Where /proc cannot say, kill() alone.
  bool mayRun() const {
    if (!seenFromHere())
      return true;
    if (kill(pid_t(Pid), 0) != 0 && errno != EPERM)
      return false;
    std::optional<ProcessStat> S = processStat(Pid);
    return !S || (!S->Ended && (Start == 0 || S->Start == Start));
  }
  /// Whether it is known to run now, on this machine.
  bool runningHere() const { return seenFromHere() && mayRun(); }
  /// Whether it is known to have ended.
  bool gone() const { return !mayRun(); }
};

/// A refusal that names a gone rank starts with this and the rank, then a
/// space: the ranks that learn of it throw PeerGone too (one atomic claim).
constexpr StringRef GonePrefix = "collc.gone.";

struct Refusal {
  std::optional<size_t> Gone;
  std::string Why;
};
Refusal parseRefusal(StringRef Text) {
  size_t Rank;
  if (Text.consume_front(GonePrefix)) {
    auto [Number, Why] = Text.split(' ');
    if (!Number.getAsInteger(10, Rank))
      return {Rank, Why.str()};
  }
  return {std::nullopt, Text.str()};
}

/// Throws the group's refusal \p Text, after \p Lead.
[[noreturn]] void throwRefusal(StringRef Text, const std::string &Lead) {
  Refusal R = parseRefusal(Text);
  if (R.Gone)
    throw PeerGone(*R.Gone, Lead + R.Why);
  throw JoinRefused(Lead + R.Why);
}

} // namespace

GroupStore::GroupStore(ProbedStore &Inner, std::string Prefix, std::chrono::milliseconds Timeout)
    : Inner(Inner), Prefix(std::move(Prefix)), Timeout(Timeout) {
  // A store that stops answering fails a call after the group's timeout.
  Inner.setTimeout(Timeout);
}

void GroupStore::set(const std::string &Key, const std::vector<char> &Data) {
  Inner.set(key(Key), Data);
}

std::vector<char> GroupStore::get(const std::string &Key) {
  wait({Key});
  return Inner.get(key(Key));
}

void GroupStore::wait(const std::vector<std::string> &Keys, const std::chrono::milliseconds &) {
  wait(Keys);
}

void GroupStore::wait(const std::vector<std::string> &Keys) {
  std::vector<std::string> Full;
  for (const std::string &K : Keys)
    Full.push_back(key(K));
  std::string Refusal = key(RefusalKey);
  auto Deadline = std::chrono::steady_clock::now() + Timeout;
  for (;;) {
    if (Inner.has(Full))
      return;
    if (std::optional<std::string> Why = Inner.claimed(Refusal))
      throwRefusal(*Why, "");
    auto Now = std::chrono::steady_clock::now();
    if (Now >= NextLivenessCheck) {
      NextLivenessCheck = Now + LivenessEvery;
      if (std::optional<PeerGone> Gone = lookForGoneRank(ClaimReadsPerLook)) {
        post(formatv("{0}{1} {2}", GonePrefix, Gone->Rank, Gone->what()).str());
        throw *Gone;
      }
    }
    if (Now >= Deadline)
      throw ::gloo::IoException(
          formatv("Wait timeout for key(s): {0}", join(Keys.begin(), Keys.end(), ", ")).str());
    std::this_thread::sleep_for(PollEvery);
  }
}

std::vector<size_t> GroupStore::unclaimedRanks() {
  std::vector<size_t> Absent;
  for (size_t R = 0; R != GroupSize; ++R)
    if (!Inner.claimed(claimKey(R)))
      Absent.push_back(R);
  return Absent;
}

/// What a rank knows of its peers' claims (GroupStore::lookForGoneRank).
struct GroupStore::PeerClaims {
  /// Per rank: whether its claim was read (a claim never changes).
  std::vector<bool> Read;
  /// The claims read whose pids this process can see, by rank.
  std::vector<std::pair<size_t, ClaimHolder>> Local;
  /// Where the next look starts reading claims not yet read.
  size_t Next = 0;
};

GroupStore::~GroupStore() = default;

std::optional<PeerGone> GroupStore::goneRank() { return lookForGoneRank(GroupSize); }

std::optional<PeerGone> GroupStore::lookForGoneRank(size_t MaxReads) {
  // Before this rank claimed its own, the group's size is not known.
  if (GroupSize == 0)
    return std::nullopt;
  if (!Peers) {
    Peers = std::make_unique<PeerClaims>();
    Peers->Read.assign(GroupSize, false);
    Peers->Read[MyRank] = true;
  }
  // The claims not read yet, from where the last look stopped, at most
  // MaxReads of them: a claim not there yet is read again next time.
  size_t From = Peers->Next;
  for (size_t Step = 0, Reads = 0; Step != GroupSize && Reads != MaxReads; ++Step) {
    size_t R = (From + Step) % GroupSize;
    if (Peers->Read[R])
      continue;
    ++Reads;
    Peers->Next = (R + 1) % GroupSize;
    std::optional<std::string> Text = Inner.claimed(claimKey(R));
    if (!Text)
      continue;
    Peers->Read[R] = true;
    // A claim collc did not write, or one of a process not seen from here:
    // nothing to watch.
    if (std::optional<ClaimHolder> Holder = ClaimHolder::parse(*Text);
        Holder && Holder->seenFromHere())
      Peers->Local.emplace_back(R, std::move(*Holder));
  }
  for (const auto &[R, Holder] : Peers->Local)
    if (Holder.gone())
      return PeerGone(R, formatv("rank {0} (process {1}) is not running: it claimed its rank and "
                                 "ended before the group formed (killed, or failed), or the "
                                 "rendezvous {2} holds the keys of an earlier run (give each run "
                                 "a new or empty {2})",
                                 R, Holder.name(), Inner.kind()));
  return std::nullopt;
}

void GroupStore::post(const std::string &Why) {
  try {
    Inner.claim(key(RefusalKey), Why);
  } catch (const StoreWriteFailed &) {
    // This rank is refused all the same; the others wait out their timeout.
  }
}

void GroupStore::refuse(const std::string &Why) {
  post(Why);
  throw JoinRefused(Why);
}

void GroupStore::claimRank(size_t Rank, size_t Size) {
  const ClaimHolder &Me = ClaimHolder::thisProcess();
  std::string ClaimKey = claimKey(Rank);
  ProbedStore::Claim C = Inner.claim(ClaimKey, Me.text());
  const char *Kind = Inner.kind();
  if (C.Set) {
    MyRank = Rank;
    GroupSize = Size;
    // Refused by a rank of this run (one started as this rank too, just
    // now, or any other), or by an earlier run whose ranks were not this one.
    if (std::optional<std::string> Why = Inner.claimed(key(RefusalKey)))
      throwRefusal(*Why, "the group was refused: ");
    ProbedStore::Claim Sized = Inner.claim(key("collc.size"), std::to_string(Size));
    if (!Sized.Set && Sized.Holder != std::to_string(Size))
      refuse(formatv("its ranks were started with different sizes: {0} (the rank that came "
                     "first) and {1} (process {2}, rank {3})",
                     Sized.Holder, Size, Me.name(), Rank));
    return;
  }
  std::optional<ClaimHolder> Parsed = ClaimHolder::parse(C.Holder);
  if (!Parsed)
    refuse(formatv(
        "the rendezvous {0} holds a claim of rank {1} that collc did not write "
        "('{2}' at {3}): expected HOST:PID START NONCE BOOT PIDNS (give each run a new or empty "
        "{0})",
        Kind, Rank, StringRef(C.Holder).take_front(80), Inner.where(ClaimKey)));
  const ClaimHolder &Holder = *Parsed;
  if (Holder.Host == Me.Host && Holder.Pid == Me.Pid && Holder.Nonce == Me.Nonce)
    refuse(formatv("this process ({0}) already joined this group as rank {1} (a group's name "
                   "joins once per rendezvous)",
                   Me.name(), Rank));
  if (Holder.runningHere())
    refuse(formatv("two running processes were started as rank {0}: {1}, which holds it, and "
                   "{2} (each process of a run needs a rank of its own)",
                   Rank, Holder.name(), Me.name()));
  if (Holder.seenFromHere())
    refuse(formatv("the rendezvous {0} holds the keys of an earlier run (give each run a new or "
                   "empty {0}; rank {1} was claimed there by process {2}, which is not running)",
                   Kind, Rank, Holder.name()));
  refuse(formatv("rank {0} is held by process {1}, which this process cannot see (another host, "
                 "boot or pid namespace), and {2} was started as rank {0} too: either two "
                 "processes of this run have that rank, or the rendezvous {3} "
                 "holds the keys of an earlier run (give each run a new or empty {3})",
                 Rank, Holder.name(), Me.name(), Kind));
}

} // namespace collc::rt::gloo
